// Package oc2import predicts which 1.x rows OpenCode 2's one-shot import
// of 1.x sessions keeps and which it drops: transformSession in
// packages/core/src/database/v1-migration.bun.ts of anomalyco/opencode
// (commit 0871f3f705c4), as far as it decides that.
//
// Per session the importer orders the 1.x messages by (time_created, id),
// patches what rows older than the required keys lack (legacyMetadata: a
// missing agent from the row's mode, its reply's, the session row's, else
// "build"; a user message's missing model from its reply, else the session
// row; an assistant message's missing parentID from the previous user
// message), and decodes each message and part with the 1.x schema, which
// is 1.18.33's (pkg/ocschema). What does not decode is skipped with a
// logged warning and reaches no OpenCode 2 table: "invalid-message" (with
// the keys its patch could not supply), "invalid-part", and "orphan-part"
// for a part whose message is not one of the session's rows. A skipped
// message takes its parts with it, without a warning.
//
// Decode is a pure function of the rows; it imports pkg/ocschema only.
// pkg/scan reports its verdicts (SF402); internal/opencodetest/oc2fixture builds the
// OpenCode 2 fixtures with it.
package oc2import
