#!/usr/bin/env python3
"""Render `tmux capture-pane -e -p` captures to one PNG, panes side by side.

Used once by hand to make docs/navsync-three-clients.png (needs Pillow and
DejaVu Sans Mono; neither is part of the build or the tests):

    capture-to-png.py --columns 80 --rows 24 --out shot.png \
        --top a.ans b.ans c.ans --bottom driver.ans --bottom-rows 6

The capture keeps SGR state from one line to the next and drops trailing
blanks, so each line is padded to the pane's width with the attributes in
force at its end: that is how the coloured background fills the pane.
"""
import argparse
import re

from PIL import Image, ImageDraw, ImageFont

FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf"
FONT_BOLD = "/usr/share/fonts/truetype/dejavu/DejaVuSansMono-Bold.ttf"

# A plain dark-terminal palette: the eight ANSI colours, then their bright forms.
PALETTE = [
    (0x1d, 0x1f, 0x21), (0xcc, 0x33, 0x33), (0x3f, 0xa3, 0x4d), (0xd6, 0xa8, 0x1c),
    (0x2f, 0x5f, 0xd0), (0xa3, 0x4f, 0xb5), (0x2a, 0xa1, 0xb3), (0xd8, 0xd8, 0xd8),
    (0x55, 0x57, 0x5a), (0xef, 0x55, 0x55), (0x6c, 0xd0, 0x7a), (0xf2, 0xd0, 0x4f),
    (0x5c, 0x8c, 0xf5), (0xcf, 0x7f, 0xe0), (0x5f, 0xd7, 0xe6), (0xff, 0xff, 0xff),
]
DEFAULT_FG = (0xd0, 0xd0, 0xd0)
DEFAULT_BG = (0x12, 0x13, 0x15)
BORDER = (0x50, 0x52, 0x56)
SGR = re.compile(r"\x1b\[([0-9;]*)m")


class Attr:
    def __init__(self):
        self.reset()

    def reset(self):
        self.fg = None
        self.bg = None
        self.bold = False
        self.dim = False
        self.reverse = False

    def copy(self):
        other = Attr()
        other.__dict__.update(self.__dict__)
        return other

    def apply(self, params):
        codes = [int(p) if p else 0 for p in params.split(";")] if params else [0]
        i = 0
        while i < len(codes):
            c = codes[i]
            if c == 0:
                self.reset()
            elif c == 1:
                self.bold = True
            elif c == 2:
                self.dim = True
            elif c == 22:
                self.bold = self.dim = False
            elif c == 7:
                self.reverse = True
            elif c == 27:
                self.reverse = False
            elif 30 <= c <= 37:
                self.fg = PALETTE[c - 30]
            elif c == 39:
                self.fg = None
            elif 40 <= c <= 47:
                self.bg = PALETTE[c - 40]
            elif c == 49:
                self.bg = None
            elif 90 <= c <= 97:
                self.fg = PALETTE[c - 90 + 8]
            elif 100 <= c <= 107:
                self.bg = PALETTE[c - 100 + 8]
            elif c in (38, 48) and i + 2 < len(codes) and codes[i + 1] == 5:
                n = codes[i + 2]
                colour = PALETTE[n] if n < 16 else DEFAULT_FG
                if c == 38:
                    self.fg = colour
                else:
                    self.bg = colour
                i += 2
            i += 1

    def colours(self):
        fg = self.fg or DEFAULT_FG
        bg = self.bg or DEFAULT_BG
        if self.reverse:
            fg, bg = bg, fg
        if self.dim:
            fg = tuple((a + b) // 2 for a, b in zip(fg, bg))
        return fg, bg


def parse(path, columns, rows):
    """The pane as rows of (character, Attr) cells."""
    text = open(path, encoding="utf-8").read()
    attr = Attr()
    grid = []
    for line in text.split("\n")[:rows]:
        cells = []
        pos = 0
        for match in SGR.finditer(line):
            for ch in line[pos:match.start()]:
                cells.append((ch, attr.copy()))
            attr.apply(match.group(1))
            pos = match.end()
        for ch in line[pos:]:
            cells.append((ch, attr.copy()))
        while len(cells) < columns:
            cells.append((" ", attr.copy()))
        grid.append(cells[:columns])
    while len(grid) < rows:
        grid.append([(" ", attr.copy()) for _ in range(columns)])
    return grid


def draw_pane(draw, grid, left, top, cell_w, cell_h, fonts):
    for r, row in enumerate(grid):
        for c, (ch, attr) in enumerate(row):
            fg, bg = attr.colours()
            x, y = left + c * cell_w, top + r * cell_h
            draw.rectangle([x, y, x + cell_w - 1, y + cell_h - 1], fill=bg)
            if ch != " ":
                draw.text((x, y), ch, font=fonts[attr.bold], fill=fg)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--top", nargs="+", required=True)
    parser.add_argument("--bottom")
    parser.add_argument("--columns", type=int, default=80)
    parser.add_argument("--rows", type=int, default=24)
    parser.add_argument("--bottom-rows", type=int, default=6)
    parser.add_argument("--size", type=int, default=15)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()

    fonts = {False: ImageFont.truetype(FONT, args.size), True: ImageFont.truetype(FONT_BOLD, args.size)}
    ascent, descent = fonts[False].getmetrics()
    cell_w = int(round(fonts[False].getlength("M")))
    cell_h = ascent + descent  # box-drawing glyphs span exactly this, so frames join up
    gap = cell_w  # one column between panes, as tmux draws its border
    pad = 12
    panes = len(args.top)
    width = panes * args.columns * cell_w + (panes - 1) * gap + 2 * pad
    bottom_h = (args.bottom_rows * cell_h + gap) if args.bottom else 0
    height = args.rows * cell_h + bottom_h + 2 * pad
    image = Image.new("RGB", (width, height), DEFAULT_BG)
    draw = ImageDraw.Draw(image)

    for i, path in enumerate(args.top):
        left = pad + i * (args.columns * cell_w + gap)
        draw_pane(draw, parse(path, args.columns, args.rows), left, pad, cell_w, cell_h, fonts)
        if i:
            x = left - gap // 2 - 1
            draw.line([x, pad, x, pad + args.rows * cell_h], fill=BORDER, width=1)
    if args.bottom:
        top = pad + args.rows * cell_h + gap
        draw.line([pad, top - gap // 2, width - pad, top - gap // 2], fill=BORDER, width=1)
        full = (width - 2 * pad) // cell_w
        draw_pane(draw, parse(args.bottom, full, args.bottom_rows), pad, top, cell_w, cell_h, fonts)
    image.save(args.out, optimize=True)


if __name__ == "__main__":
    main()
