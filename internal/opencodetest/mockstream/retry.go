package mockstream

// RetryAfterMS is the retry-after-ms header every mock sends with an error
// answer (Server.Reject). It is a harness device, not a provider's: OpenCode 1.18.33
// retries a refused request whose error text or body holds 429, 500, 502,
// 503, 504 or 524 anywhere (a limit of 50000000 bytes, a count of 1500
// tokens) five times, waiting 2, 4, 8, 16 and 32 seconds between tries
// unless the answer names a delay in retry-after-ms or retry-after; both
// 1.18.33 and 1.1.65 read the header only for how long to wait, never for
// whether to retry (internal/opencodetest/OBSERVED.md, "Retries"). With
// it, the same requests are sent and the same failure is stored, without a
// minute of idle waiting per refused turn.
const RetryAfterMS = "100"
