# Turns a navsync binary's --help text into man page sections, so the pages
# are made from the very text the binaries print and cannot disagree with it.
#
# part=synopsis prints the SYNOPSIS section (the "usage:" lines);
# part=sections prints everything after it: items ("  TERM  description",
# continuation lines indented to the description), headers at column 0
# ("commands:", "exit status: text"), and prose lines. Items before any
# header go under the section named by `first` (default OPTIONS).
#
# The layout rules are the ones DaemonOptions.usage and ClientOptions.usage
# follow; Tests/packaging/run.sh checks no flag is lost on the way.

function roff_escape(text,    out, i, c, previous) {
    gsub(/\\/, "\\e", text)
    out = ""
    previous = " "
    for (i = 1; i <= length(text); i++) {
        c = substr(text, i, 1)
        # A hyphen that starts a flag (or follows one) is a minus sign in roff.
        if (c == "-" && index(" [(|,=-", previous) > 0) out = out "\\-"
        else out = out c
        previous = c
    }
    if (out ~ /^[.']/) out = "\\&" out
    return out
}

function term_roff(term,    words, n, i, w, out) {
    n = split(term, words, " ")
    out = ""
    for (i = 1; i <= n; i++) {
        w = roff_escape(words[i])
        if (words[i] ~ /[A-Z]/) w = "\\fI" w "\\fR"
        else if (words[i] ~ /^[a-z-]/) w = "\\fB" w "\\fR"
        out = out (i > 1 ? " " : "") w
    }
    return out
}

function indent_of(line) {
    match(line, /^ */)
    return RLENGTH
}

function close_nesting() {
    if (nested) { print ".RE"; nested = 0 }
}

function open_section(title) {
    close_nesting()
    print ".SH " (title ~ / / ? "\"" title "\"" : title)
    section_open = 1
    base_indent = -1
    section_column = -1
    item_indent = -1
    description_column = -1
    in_paragraph = 0
}

BEGIN {
    if (first == "") first = "OPTIONS"
    in_usage = 0
    section_open = 0
    nested = 0
    item_indent = -1
    description_column = -1
    section_column = -1
    base_indent = -1
}

# The synopsis: "usage: NAME ..." and its continuation lines, indented at
# least as far as the name; anything less indented starts the sections.
/^usage: / {
    in_usage = 1
    if (part == "synopsis") {
        print ".SH SYNOPSIS"
        print ".nf"
        print roff_escape(substr($0, 8))
    }
    next
}
in_usage && /^       +[^ ]/ {
    if (part == "synopsis") print roff_escape(substr($0, 8))
    next
}
in_usage {
    in_usage = 0
    if (part == "synopsis") print ".fi"
}
part != "sections" { next }

/^[ \t]*$/ {
    item_indent = -1
    description_column = -1
    in_paragraph = 0
    next
}

# A header at column 0: "commands:", "options:", "exit status: text ...".
/^[a-z][a-z ]*:( |$)/ {
    colon = index($0, ":")
    open_section(toupper(substr($0, 1, colon - 1)))
    rest = substr($0, colon + 1)
    sub(/^ +/, "", rest)
    if (rest != "") { print ".PP"; print roff_escape(rest); in_paragraph = 1; paragraph_indent = 0 }
    next
}

{
    indent = indent_of($0)
    body = substr($0, indent + 1)

    # More of the current item's description.
    if (item_indent >= 0 && ((description_column >= 0 && indent >= description_column) ||
                             (description_column < 0 && indent > item_indent + 2))) {
        if (description_column < 0) description_column = indent
        print roff_escape(body)
        next
    }
    # More of the paragraph the previous line started.
    if (in_paragraph && indent == paragraph_indent) {
        print roff_escape(body)
        next
    }
    if (!section_open) open_section(first)

    # Where the description starts: at the section's description column when
    # the term ends one space short of it (--fsync always|batch fsync ...),
    # else after the first run of two or more spaces.
    term = ""
    description = ""
    if (section_column > indent && substr($0, section_column, 1) == " " &&
        substr($0, section_column + 1, 1) != " " && substr($0, section_column + 1, 1) != "") {
        term = substr($0, indent + 1, section_column - indent - 1)
        description = substr($0, section_column + 1)
        sub(/ +$/, "", term)
    } else if (match(body, /   *[^ ]/)) {
        term = substr(body, 1, RSTART - 1)
        description = substr(body, RSTART + RLENGTH - 1)
        if (section_column < 0) section_column = indent + RSTART + RLENGTH - 2
    }
    is_item = description != "" || body ~ /^-/
    if (!is_item) {
        close_nesting()
        print ".PP"
        print roff_escape(body)
        in_paragraph = 1
        paragraph_indent = indent
        item_indent = -1
        next
    }
    if (base_indent < 0) base_indent = indent
    if (indent > base_indent && !nested) { print ".RS 4"; nested = 1 }
    if (indent <= base_indent) close_nesting()
    if (description == "") term = body
    print ".TP"
    print term_roff(term)
    item_indent = indent
    description_column = -1
    if (description != "") {
        description_column = length($0) - length(description)
        print roff_escape(description)
    }
}

END {
    if (in_usage && part == "synopsis") print ".fi"
    if (part == "sections") close_nesting()
}
