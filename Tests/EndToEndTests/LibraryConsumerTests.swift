import ChildProcessHarness
import Foundation
import XCTest

/// NavSyncKit as an outside package sees it: a throwaway package in a temp
/// directory depends on this one by path, holds every ` ```swift ` snippet
/// of docs/LIBRARY.md and the example program's sources, and uses nothing
/// but public names. It is built with `swift build` (scratch path kept under
/// .build/consumer, so only the first run compiles the library) and its
/// program runs the snippets against real daemons.
final class LibraryConsumerTests: XCTestCase {
    func test_outsidePackage_buildsTheDocsSnippetsAndTheExample_andRunsThem() throws {
        let root = Binaries.packageRoot
        let package = try TemporaryDirectory()
        defer { package.remove() }
        let fileManager = FileManager.default

        let manifest = """
            // swift-tools-version:6.2
            import PackageDescription

            let package = Package(
                name: "LibraryConsumer",
                dependencies: [.package(name: "navsync", path: "\(root)")],
                targets: [
                    .executableTarget(name: "Snippets", dependencies: [.product(name: "NavSyncKit", package: "navsync")]),
                    .executableTarget(name: "ABCRouter", dependencies: [.product(name: "NavSyncKit", package: "navsync")]),
                ]
            )
            """
        try package.write("Package.swift", manifest)

        // Every swift block of the guide becomes a file of its own.
        let guide = try String(contentsOfFile: root + "/docs/LIBRARY.md", encoding: .utf8)
        let snippets = Self.swiftBlocks(in: guide)
        XCTAssertGreaterThanOrEqual(snippets.count, 5, "the guide's snippets were found")
        try fileManager.createDirectory(atPath: package.file("Sources/Snippets"), withIntermediateDirectories: true)
        for (index, snippet) in snippets.enumerated() {
            try package.write("Sources/Snippets/Snippet\(index).swift", snippet)
        }
        try package.write("Sources/Snippets/main.swift", Self.snippetRunner)
        try package.write("Sources/Snippets/ContractNames.swift", Self.contractNames)

        // The example program, as is.
        try fileManager.createDirectory(atPath: package.file("Sources/ABCRouter"), withIntermediateDirectories: true)
        for name in try fileManager.contentsOfDirectory(atPath: root + "/Clients/abc-router") where name.hasSuffix(".swift") {
            try fileManager.copyItem(atPath: root + "/Clients/abc-router/" + name, toPath: package.file("Sources/ABCRouter/" + name))
        }

        let scratch = root + "/.build/consumer"
        let build = try runProcess("/usr/bin/env", ["swift", "build", "--package-path", package.path, "--scratch-path", scratch],
                                   environment: ProcessInfo.processInfo.environment, timeout: 900)
        XCTAssertEqual(build.status, 0, "the outside package did not build:\n\(build.stdout)\n\(build.stderr)")
        guard build.status == 0 else { return }

        let colors = try DaemonProcess(state: "none")
        defer { colors.stop() }
        let abc = try DaemonProcess(arguments: ["--screens", root + "/Clients/netcat/abc-screens.json"], state: "none")
        defer { abc.stop() }
        let run = try runProcess(scratch + "/debug/Snippets", ["127.0.0.1:\(colors.port)", "127.0.0.1:\(abc.port)"], timeout: 60)
        XCTAssertEqual(run.status, 0, "\(run.stdout)\n\(run.stderr)")
        XCTAssertEqual(run.stdout.split(separator: "\n").map(String.init), [
            "0 [red] []",
            "followMain: 0 /red",
            "seed000: green",
            "seed001: dismissed",
            "seed002: View A -> View B: some data -> View C",
            "ifAt: moved on, conflict current=4, at 4",
            "modal: ok",
        ])

        let router = try runProcess(scratch + "/debug/ABCRouter",
                                    ["--connect", "127.0.0.1:\(abc.port)", "--drive", "1", "--interval", "20"], timeout: 30)
        XCTAssertEqual(router.status, 0, router.stderr)
        XCTAssertTrue(router.stdout.contains("View C — Go to A"), router.stdout)

        // Started against the wrong catalog or nothing at all, it says what to do, in words.
        let wrongCatalog = try runProcess(scratch + "/debug/ABCRouter", ["--connect", "127.0.0.1:\(colors.port)"], timeout: 30)
        XCTAssertEqual(wrongCatalog.status, 1)
        XCTAssertTrue(wrongCatalog.stderr.contains("it shows red") && wrongCatalog.stderr.contains("--screens Clients/netcat/abc-screens.json"),
                      wrongCatalog.stderr)
        let refusing = closedPort()
        let nobody = try runProcess(scratch + "/debug/ABCRouter", ["--connect", "127.0.0.1:\(refusing)"], timeout: 30)
        XCTAssertEqual(nobody.status, 1)
        XCTAssertTrue(nobody.stderr.contains("connection refused"), nobody.stderr)
        XCTAssertFalse(nobody.stderr.contains("disconnected"), "no Swift case names: \(nobody.stderr)")
    }

    /// The bodies of the ` ```swift ` fences of a Markdown text.
    static func swiftBlocks(in markdown: String) -> [String] {
        var blocks: [String] = []
        var current: [Substring]?
        for line in markdown.split(separator: "\n", omittingEmptySubsequences: false) {
            if current == nil, line.trimmingCharacters(in: .whitespaces) == "```swift" {
                current = []
            } else if current != nil, line.trimmingCharacters(in: .whitespaces) == "```" {
                blocks.append(current!.joined(separator: "\n") + "\n")
                current = nil
            } else {
                current?.append(line)
            }
        }
        return blocks
    }

    /// Every name of SWIFT-LIBRARY.md with its exact shape, compiled (never
    /// run): the exhaustive switches prove the enums have exactly the
    /// contract's cases, the annotated lets the properties' types.
    static let contractNames = #"""
        import NavSyncKit

        struct Custom: NavScreen {
            init?(screen: String, data: String?) { if screen.isEmpty { return nil }; self.screen = screen; self.data = data }
            let screen: String
            let data: String?
        }

        @MainActor
        func everyContractName() async throws {
            let navigation = SharedNavigation<NavEntry>(connect: "127.0.0.1:7878", room: "main", token: nil)
            let defaults = SharedNavigation<Custom>()
            let _: [Custom] = defaults.stack
            try await navigation.start()
            let stack: [NavEntry] = navigation.stack
            let sheets: [NavEntry] = navigation.sheets
            let revision: UInt64 = navigation.revision
            let stream: AsyncStream<NavChange<NavEntry>> = navigation.changes
            let entry = NavEntry(screen: "red", data: nil)
            var revisions: [UInt64] = [
                try await navigation.select(entry), try await navigation.push(entry), try await navigation.pop(),
                try await navigation.root(), try await navigation.next(data: nil), try await navigation.next(),
                try await navigation.open(stack: stack, sheets: sheets), try await navigation.open(stack: stack),
                try await navigation.present(entry), try await navigation.dismiss(),
            ]
            let mutations: [NavMutation<NavEntry>] = [
                .select(entry), .push(entry), .pop, .root, .next(data: "x"), .open(stack: [entry], sheets: []),
                .present(entry), .dismiss,
            ]
            for mutation in mutations { revisions.append(try await navigation.ifAt(revision, mutation)) }
            try await navigation.select(entry)  // @discardableResult
            switch mutations[0] {
            case .select, .push, .pop, .root, .next, .open, .present, .dismiss: break
            }
            switch navigation.connection {
            case .idle, .connecting, .connected, .reconnecting, .failed(_), .stopped: break
            }
            let state: NavConnectionState = .failed("why")
            _ = state == .stopped
            for await change in stream {
                let _: UInt64 = change.revision
                let _: [NavEntry] = change.stack
                let _: [NavEntry] = change.sheets
                switch change.op {
                case .select, .push, .pop, .root, .next, .open, .present, .dismiss, .state: break
                }
                _ = change.op.rawValue
            }
            do {
                try await navigation.pop()
            } catch let error as NavSyncError {
                switch error {
                case .server(let code, let message): _ = (code, message)
                case .disconnected, .notRunning: break
                case .invalidData(let text), .unknownScreen(let text): _ = text
                }
            }
            let _: Error = NavSyncError.notRunning
            // Who else is here.
            let named = SharedNavigation<NavEntry>(connect: "127.0.0.1:7878", room: "main", token: nil, name: "ada")
            let members: [NavMember] = named.members
            let me: NavMember? = named.me
            if let member = members.first ?? me {
                let _: String = member.id
                let _: String = member.name
                let _: NavRole = member.role
                let _: String? = member.at
                let _: Set<NavMember> = [member]
                let _: NavMember.ID = member.id
            }
            switch NavRole.control {
            case .control, .view: break
            }
            _ = NavRole(rawValue: "view")
            try await named.look(at: [entry], sheets: [entry])
            try await named.look(at: [entry])
            try await named.follow()
            await navigation.stop()
        }
        """#

    /// Calls each snippet against the two daemons and prints one line per seed.
    static let snippetRunner = #"""
        import Foundation
        import NavSyncKit

        @MainActor
        func runSnippets(colors: String, abc: String) async throws {
            try await followMain(at: colors)
            let probe = SharedNavigation<NavEntry>(connect: colors)
            try await probe.start()
            print("followMain: \(probe.revision) /\(probe.stack.map(\.screen).joined(separator: "/"))")
            await probe.stop()

            let palette = SharedNavigation<ColorScreen>(connect: colors, room: "seed000")
            try await palette.start()
            try await menuPicked(.green, on: palette)
            print("seed000: \(presentedView(palette)!)")
            await palette.stop()

            let coordinator = SharedNavigation<NavEntry>(connect: colors, room: "seed001")
            try await coordinator.start()
            let flow = Task { @MainActor in try await showProfile(on: coordinator) }
            while coordinator.stack.last != NavEntry("blue", data: "profile") {
                try await Task.sleep(for: .milliseconds(5))
            }
            try await backButton(on: coordinator)
            print("seed001: \(try await flow.value ? "dismissed" : "still shown")")
            await coordinator.stop()

            let shared = SharedNavigation<AppScreen>(connect: abc, room: "seed002")
            try await shared.start()
            let router = AppRouter(navigation: shared)
            var seen = [describe(router.currentScreen!)]
            try await router.onNext(data: "some data")
            seen.append(describe(router.currentScreen!))
            try await router.navigate(to: .viewC)
            seen.append(describe(router.currentScreen!))
            print("seed002: \(seen.joined(separator: " -> "))")

            try await router.navigate(to: .viewA)
            let movedOn = try await continueIfUnchanged(shared)
            do {
                try await shared.ifAt(shared.revision - 1, .root)
                print("ifAt: a stale revision was taken")
            } catch NavSyncError.server(code: "conflict", let message) {
                print("ifAt: \(movedOn ? "moved on" : "did not move"), conflict \(message), at \(shared.revision)")
            }

            do {
                try await deepLinkAndModal(shared)
                print("modal: ok")
            } catch {
                print("modal: \(error)")
            }
            await shared.stop()
        }

        let arguments = CommandLine.arguments
        do {
            try await runSnippets(colors: arguments[1], abc: arguments[2])
        } catch {
            print("failed: \(error)")
            exit(1)
        }
        """#
}
