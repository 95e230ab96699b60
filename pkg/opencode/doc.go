// Package opencode is what sessfix knows about OpenCode and its providers,
// apart from the rules that use it: how OpenCode stores and reads parts and
// messages (parts.go), when a session may still be written (SettlePolicy,
// the one rule for "may OpenCode still be writing this session?" that scan,
// fix and watch all consult), and how to read a provider's error text
// (ErrorType, DetectErrorType and the index and item id it names) and read
// it against a stored session (ReadError, Recovery, Defect).
//
// It holds no rules and no rule codes: pkg/scan's rules, pkg/fix's repairs,
// pkg/watch and the commands ask it. It reads sessions through pkg/store and
// what OpenCode sends through pkg/sent, and imports nothing above them.
package opencode
