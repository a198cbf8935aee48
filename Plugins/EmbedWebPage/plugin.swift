import PackagePlugin

/// Turns `Web/index.html` into a Swift source file of the target it is
/// applied to, at build time, so the daemon carries its web page inside the
/// binary (no resource bundle to ship next to it, nothing to find at run
/// time) while the page stays a real HTML file in the repository.
@main
struct EmbedWebPage: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let page = context.package.directoryURL.appending(path: "Web/index.html")
        let output = context.pluginWorkDirectoryURL.appending(path: "WebPage.swift")
        return [
            .buildCommand(displayName: "Embedding Web/index.html",
                          executable: try context.tool(named: "embed-page").url,
                          arguments: [page.path, output.path],
                          inputFiles: [page], outputFiles: [output]),
        ]
    }
}
