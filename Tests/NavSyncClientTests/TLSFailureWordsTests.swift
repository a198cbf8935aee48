import XCTest
import NavSyncClient

/// OpenSSL's reasons turned into what to do, OpenSSL's words kept after it.
final class TLSFailureWordsTests: XCTestCase {
    func test_handshake_knownReasons_getAdviceFirst_andKeepTheReason() {
        let table: [(String, String)] = [
            ("certificate verify failed: unable to get local issuer certificate",
             "the certificate is not signed by a known authority — pass --tls-ca FILE for a private CA"),
            ("certificate verify failed: self-signed certificate",
             "the certificate is not signed by a known authority — pass --tls-ca FILE for a private CA"),
            ("wrong version number", "this address does not speak TLS: drop tls://"),
            ("packet length too long", "this address does not speak TLS: drop tls://"),
            ("certificate verify failed: Hostname mismatch", "the certificate does not name nav.example"),
            ("certificate verify failed: certificate has expired", "the certificate is outside its validity dates"),
        ]
        for (reason, advice) in table {
            let words = TLSFailureWords.handshake(reason, host: "nav.example")
            XCTAssertTrue(words.hasPrefix(advice), words)
            XCTAssertTrue(words.hasSuffix("(\(reason))"), words)
        }
    }

    func test_handshake_unknownReason_isLeftAsItIs() {
        XCTAssertEqual(TLSFailureWords.handshake("handshake timed out", host: "h"), "handshake timed out")
    }

    func test_looksLikeTLS_onlyForARecordHeader() {
        let cases: [([UInt8], Bool)] = [
            ([0x15, 0x03, 0x03, 0x00, 0x02], true), ([0x16, 0x03, 0x01], true), ([0x15], false),
            (Array("STATE 0 /red\n".utf8), false), (Array("ERR busy\n".utf8), false), ([], false),
        ]
        for (bytes, expected) in cases {
            bytes.withUnsafeBytes { XCTAssertEqual(TLSFailureWords.looksLikeTLS($0), expected, "\(bytes)") }
        }
    }

    func test_speaksTLS_namesTheAddressToUse() {
        XCTAssertEqual(TLSFailureWords.speaksTLS(.tcp(host: "10.0.0.5", port: 7443)),
                       "this address speaks TLS: use tls://10.0.0.5:7443")
    }
}

/// Routes as people read them.
final class SpokenRouteTests: XCTestCase {
    func test_words_decodeData_joinLikeTheBreadcrumb_andNameSheets() {
        XCTAssertEqual(SpokenRoute.words("/red/blue:Quarterly%20numbers"), "red › blue: Quarterly numbers")
        XCTAssertEqual(SpokenRoute.words("/red#green:a%2Fb#blue", unicode: false), "red + green: a/b + blue")
        XCTAssertEqual(SpokenRoute.words("/red/blue", unicode: false), "red > blue")
    }

    func test_words_undecodableRoute_isShownAsItCame() {
        XCTAssertEqual(SpokenRoute.words("not a route"), "not a route")
    }
}
