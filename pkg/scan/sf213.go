package scan

import (
	"github.com/sessfix/sessfix/pkg/ocenv"
	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/sent"
)

var ruleSF213 = &Rule{
	Code:     SF213,
	Name:     "unknown-model",
	Severity: Error,
	Summary:  "the session's model is not one opencode has in the user's config or models catalogue",
	What: "A session whose stored model (the session row's `model`: provider and model id, what OpenCode resumes " +
		"the session with) names a provider or a model OpenCode would not load on this machine: the provider is " +
		"in neither the user's config nor the models.dev catalogue OpenCode caches, the provider has no such " +
		"model, or the config hides it (`disabled_providers`, `enabled_providers`, a provider's `whitelist` or " +
		"`blacklist`). A model retired by its provider, a custom provider removed from the config, or a session " +
		"copied from another machine leaves one (OpenCode issue #42781). sessfix reads the config files " +
		"OpenCode 1.x merges for the session's directory (global, `$OPENCODE_CONFIG`, the project's " +
		"`opencode.json(c)` and `.opencode/` files, `$OPENCODE_CONFIG_CONTENT`) and the catalogue " +
		"(`$OPENCODE_MODELS_PATH`, else `~/.cache/opencode/models.json`). Without a cached catalogue, a model " +
		"the config does not define cannot be judged and is not reported; neither are providers OpenCode drops " +
		"for lack of credentials (sessfix does not read credentials). The messages' models are not checked: " +
		"OpenCode resumes with the session's.",
	Why: "OpenCode cannot resume the session: `opencode run --session` exits 1 before calling any provider, with " +
		"`UnknownError: Unexpected server error` on screen and `ProviderModelNotFoundError: Model not found` " +
		"in the log (observed on OpenCode 1.18.33); OpenCode 1.17 exited without a word.",
	ProviderError: "ProviderModelNotFoundError: Model not found: anthropic/claude-retired-1. Did you mean: …",
	Marks:         []string{"providermodelnotfounderror", "model not found:"},
	FixDoc: "`setSessionModel` gives the session row the model your config makes OpenCode's default (the " +
		"config's `model` when OpenCode has it, else the one model the config defines when there is exactly " +
		"one). It is a default repair because it chooses nothing for you: it is the model OpenCode itself " +
		"starts a new session with, the change is one column, backed up and undone by `sessfix undo`, and it " +
		"is validated like any plan: the preflight judges the history for the new model's provider family (the " +
		"session row's model is the one OpenCode resumes with), and a model change that would leave findings " +
		"for that family is not made (the finding stays, unfixed, saying why). Only the row's `model` column " +
		"changes (its `id` and `providerID`, and `variant` back to `default`), not `time_updated`; the session " +
		"then resumes (shown on OpenCode 1.18.33). Without such a default the finding is report only: pick " +
		"the model yourself when you continue, `opencode run --session ID --model provider/model` (or `-m` in " +
		"the TUI). Only SQLite session rows are repaired.",
	Fixable: true,
	Fix:     "setSessionModel",
	Check:   checkUnknownModel,
}

func checkUnknownModel(c *Context) {
	s := c.Session
	if c.Opts.OpenCode == nil || s.Info == nil {
		return
	}
	providerID, modelID := sent.SessionModel(s)
	if providerID == "" || modelID == "" {
		return
	}
	ms, err := c.Opts.OpenCode.Models(s.Info.Get("directory").Str)
	if err != nil {
		return // a config OpenCode cannot read fails every session alike; not this rule's to say
	}
	v, why := ms.Lookup(providerID, modelID)
	if v != ocenv.Missing {
		return
	}
	f := Finding{Location: s.Info.Loc}
	f.Message = "opencode cannot resume this session: its model " + providerID + "/" + modelID + " is not one opencode has here (" + why + ")"
	if p, m, ok := ms.Default(); ok {
		f.Message += "; your config's model is " + p + "/" + m
	}
	if _, _, ok := opencode.ModelRepair(s, c.Opts.OpenCode); !ok {
		c.reportNoFix(f)
		return
	}
	c.Report(f)
}
