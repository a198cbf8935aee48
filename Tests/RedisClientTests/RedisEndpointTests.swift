import RedisClient
import XCTest

final class RedisEndpointTests: XCTestCase {
    func test_endpoint_readsBothForms() {
        XCTAssertEqual(RedisEndpoint(url: "redis://127.0.0.1:6379"), .tcp(host: "127.0.0.1", port: 6379, database: 0))
        XCTAssertEqual(RedisEndpoint(url: "redis://localhost:7000/3"), .tcp(host: "localhost", port: 7000, database: 3))
        XCTAssertEqual(RedisEndpoint(url: "redis://[::1]:6380/"), .tcp(host: "::1", port: 6380, database: 0))
        XCTAssertEqual(RedisEndpoint(url: "unix:/run/redis.sock"), .unix(path: "/run/redis.sock", database: 0))
        XCTAssertEqual(RedisEndpoint(url: "redis://[::1]:6380/2")?.description, "redis://[::1]:6380/2")
    }

    func test_endpoint_malformedTable_isRefused() {
        let bad = ["", "127.0.0.1:6379", "redis://", "redis://host", "redis://:6379", "redis://host:0",
                   "redis://host:65536", "redis://host:port", "redis://host:6379/x", "redis://host:6379/-1",
                   "redis://user@host:6379", "redis://[::1:6379", "unix:", "unix:relative", "http://host:6379",
                   "redis://host:６３７９"]
        for url in bad {
            XCTAssertNil(RedisEndpoint(url: url), url)
        }
    }
}
