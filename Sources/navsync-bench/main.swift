// navsync-bench: fan-out latency and throughput of navsyncd beside peers.
// (Being written; see issue 5.)
print("navsync-bench: not implemented yet")
