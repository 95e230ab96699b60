// Package e2e proves, with real OpenCode binaries, that sessions sessfix
// repairs are accepted again.
//
// The package holds only tests. They install the pinned OpenCode releases
// (opencode-ai 1.18.33, SQLite, and 1.1.65, JSON storage/) from npm through
// internal/opencodetest, build the sessfix binary once, and drive both
// against internal/opencodetest/mockanthropic, a strict mock of the Anthropic Messages API
// whose validator is independent of sessfix's checks. Nothing is skipped:
// when OpenCode cannot be installed the tests fail.
//
// For each OpenCode version the suite records a healthy session with a tool
// loop and a second turn (thinking on), checks that sessfix scan reports
// nothing for it, and then, per scenario, copies that data dir into a fresh
// OpenCode home and breaks it the way users reported: edited records
// (whitespace-only text, reasoning ordered after a tool call, unsigned
// reasoning on the final tool-loop message, a corrupted signature, a
// thinking-only turn, a tool stuck in running, 0-byte and NUL-filled part
// files, a part id without its prefix) or a real SIGKILL of `opencode run` at
// a chosen moment of a turn (the mock holds its stream there). Each scenario
// then:
//
//  1. scans the broken store (`sessfix scan --format json`): sessfix must
//     report it, and for a session the mock rejects, a preflight finding
//     (SF150–SF169) must predict the mock's exact error text;
//  2. resumes it with `opencode run --session ID continue` and records the
//     mock's verdict and error (OpenCode stores the failed attempt);
//  3. runs `sessfix fix --yes` with no other hint;
//  4. resumes again: the mock must accept every request, `opencode export`
//     must succeed, `opencode serve` must answer GET /session/:id/message
//     with 200, and every text the user wrote must still be there.
//
// For the other provider families (OpenAI Responses, Kimi through an
// OpenAI-compatible provider, Gemini, Bedrock) the suite starts from the
// sessions real OpenCode 1.18.33 recorded against internal/opencodetest/mockopenai,
// internal/opencodetest/mockgemini and internal/opencodetest/mockbedrock (testdata/real), breaks each
// the way internal/opencodetest's lab did (another account, `store` switched
// to true, a kill's stored shape, a tool step without reasoning, a model
// switch), and proves error-driven recovery (families_test.go): the resume is
// rejected, scan reports SF302 with the stored text and its class, `fix
// --yes` repairs it, `undo --last` restores the store exactly, and after the
// fix again the mock accepts the resume.
//
// DeepSeek's and Kimi's thinking rule is not settled (does it cover every
// turn, does "" count as passed back?), so their cases also run under both
// readings internal/opencodetest/mockopenai knows, lenient and strict, with `sessfix fix`
// before any resume and right after a failed one (readings_test.go, run by
// TestCompatibility): every broken session must resume with its tool
// calls and outputs still in the request, and a healthy one must be left
// alone.
//
// The sessions bricked by their images (image_test.go, toolimage_test.go)
// are recorded once and repaired in both timings too: right after the
// failed resume, and in a fresh OpenCode home holding a copy of the store
// saved before it (beforeAnyResume), where undo must also restore the
// store exactly; the resume after each fix must still send the images,
// each one decoding within the limits (repairImages).
//
// sessfix runs with HOME and the XDG directories of the OpenCode home. fix
// runs with its default settings, right after the failed attempt or the
// kill, as a user runs it; scans add --settle=0 (no settle window), so that
// right after a kill only what sessfix sees of OpenCode (nothing holds the
// store any more) decides that the turn was abandoned. TestLiveTurnLeftAlone
// holds a live OpenCode in the middle of a turn past the settle window and
// checks that scan and fix leave it alone until OpenCode is killed;
// TestFixRightAfterAFailedAttempt runs fix the moment OpenCode has stored a
// failed attempt.
//
// The results are written to docs/compatibility.md as a table (scenario ×
// OpenCode version × verdict before, sessfix findings, prediction, verdict
// after), with what the suite found out about OpenCode 1.18's `event`
// table. The table holds no timings or random ids, so a fresh run must
// reproduce the committed file: the test fails when it differs, and
// `go test -tags acceptance ./e2e -update` rewrites it.
package e2e
