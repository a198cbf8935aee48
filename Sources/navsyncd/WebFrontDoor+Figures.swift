import NavSyncServer
import NavSyncWeb

extension WebFrontDoor {
    /// The front door's rows of the daemon's table of figures (`STATS`, `/metrics`).
    var figures: [Figure] {
        [
            .counter("http_requests", requestsTotal, help: "HTTP requests answered, refusals included."),
            .gauge("websockets", webSocketsOpen, help: "Open WebSocket connections."),
            .counter("websockets_opened", webSocketsTotal, help: "WebSocket connections opened.",
                     metricName: "navsync_websockets_total"),
        ]
    }
}
