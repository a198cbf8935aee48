import ChildProcessHarness
import Foundation

/// Certificates made for one test run with the `openssl` command, in a
/// directory of their own: a throwaway CA and a server certificate it signed
/// for `IP:127.0.0.1` and `DNS:localhost`, a second such certificate (to see
/// a reload), one for another name, an expired one, an unrelated CA, and a
/// key that matches none of them. Nothing is checked in: every run makes
/// its own, so no test depends on a date.
public final class TestCertificates: Sendable {
    public let directory: String

    public var caFile: String { directory + "/ca.pem" }
    public var serverCertificate: String { directory + "/server.pem" }
    public var serverKey: String { directory + "/server.key" }
    /// Another certificate for the same names and key kind, signed by the same CA, with subject CN=second.
    public var secondCertificate: String { directory + "/second.pem" }
    public var secondKey: String { directory + "/second.key" }
    /// Signed by the CA for `DNS:elsewhere.example` only (key: `serverKey`).
    public var wrongNameCertificate: String { directory + "/wrongname.pem" }
    /// Signed by the CA for the right names, but its validity ended before it began (key: `serverKey`).
    public var expiredCertificate: String { directory + "/expired.pem" }
    /// A CA that signed nothing here.
    public var unrelatedCAFile: String { directory + "/other-ca.pem" }
    /// A key that belongs to no certificate.
    public var unrelatedKey: String { directory + "/other.key" }

    public init() throws {
        directory = NSTemporaryDirectory() + "navsync-tls-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let script = """
            set -e
            cd "$1"
            key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null; }
            key ca.key; key server.key; key second.key; key other-ca.key; key other.key
            openssl req -x509 -new -key ca.key -out ca.pem -days 2 -subj /CN=navsync-test-ca
            openssl req -x509 -new -key other-ca.key -out other-ca.pem -days 2 -subj /CN=unrelated-test-ca
            printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\\n' > right.ext
            printf 'subjectAltName=DNS:elsewhere.example\\n' > wrong.ext
            sign() {  # key subject days ext out
                openssl req -new -key "$1" -subj "/CN=$2" -out request.csr
                openssl x509 -req -in request.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days "$3" \\
                    -extfile "$4" -out "$5" 2>/dev/null
            }
            sign server.key localhost 2 right.ext server.pem
            sign second.key second 2 right.ext second.pem
            sign server.key elsewhere 2 wrong.ext wrongname.pem
            sign server.key localhost -1 right.ext expired.pem
            """
        let result = try runProcess("/bin/sh", ["-c", script, "sh", directory], timeout: 30)
        guard result.status == 0 else {
            throw Failure("openssl could not make the test certificates (status \(result.status)): \(result.stderr)")
        }
    }

    /// The SHA-256 of the certificate's public key, base64 (Chromium's --ignore-certificate-errors-spki-list).
    public func spkiHash(of certificate: String) throws -> String {
        let pipeline = "openssl x509 -in \"$1\" -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64"
        let result = try runProcess("/bin/sh", ["-c", pipeline, "sh", certificate])
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    deinit { try? FileManager.default.removeItem(atPath: directory) }

    /// One set for every test of the process, made on first use (a static
    /// `let` is initialised once, safely from any thread) and removed when
    /// the process exits: the test classes share it instead of each making
    /// and keeping its own.
    public static let shared: TestCertificates = {
        let made: TestCertificates
        do {
            made = try TestCertificates()
        } catch {
            fatalError("\(error)")
        }
        atexit { try? FileManager.default.removeItem(atPath: TestCertificates.shared.directory) }
        return made
    }()

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
        init(_ description: String) { self.description = description }
    }
}
