package fix

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/scan"
	"github.com/sessfix/sessfix/pkg/store"
)

// Strategy is one way to repair a rule's findings. Strategies of a rule are
// tried in order until one passes validation; `--strategy CODE=NAME` picks
// one and tries only that.
type Strategy struct {
	Name string `json:"name"`
	// Mutations names the mutations the strategy applies.
	Mutations string `json:"mutations"`
	// Doc says when it applies, lowercase, no trailing period.
	Doc string `json:"doc"`
	// OnlyOnRequest strategies are never tried unless chosen.
	OnlyOnRequest bool `json:"only_on_request"`
	// mixed strategies apply a different set of their Mutations to
	// each target: a repair names those its edits made.
	mixed bool
}

// madeBy is what a repair by sg says it did: sg's Mutations, or for a
// mixed strategy those of them its edits made, in sg's order.
func madeBy(sg Strategy, eds []store.Edit) string {
	if !sg.mixed {
		return sg.Mutations
	}
	made := map[string]bool{}
	for _, e := range eds {
		for _, m := range strings.Split(e.Mutation, "+") {
			made[m] = true
		}
	}
	var out []string
	for _, m := range strings.Split(sg.Mutations, "+") {
		if made[m] {
			out = append(out, m)
		}
	}
	if len(out) == 0 {
		return sg.Mutations
	}
	return strings.Join(out, "+")
}

// errNotApplicable means a strategy does not apply to this target (the
// planner moves on to the next one without reporting it).
var errNotApplicable = errors.New("not applicable")

// planFunc computes a strategy's edits on the current working session.
type planFunc func(w *work) ([]store.Edit, error)

type strat struct {
	Strategy
	plan planFunc
}

var (
	stReplace = Strategy{Name: "replace", Mutations: "replaceEmptyTextParts", Doc: "put the placeholder into the message's empty or whitespace-only text parts"}
	stInject  = Strategy{Name: "inject", Mutations: "injectTextPart", Doc: "add a synthetic placeholder text part after every existing part"}
	stExclude = Strategy{Name: "exclude", Mutations: "excludeMessage", Doc: "give the assistant turn an UnknownError naming sessfix, so opencode stops sending it (it stays visible)"}
	stMove    = Strategy{Name: "move", Mutations: "moveThinkingFirst", Doc: "re-key the message's thinking so it sorts before the first content part of its step; only when the message owns signed thinking"}
	stStrip   = Strategy{Name: "strip", Mutations: "stripThinkingParts", Doc: "remove the message's thinking parts (backed up)"}
	stPrepend = Strategy{Name: "prepend", Mutations: "prependThinkingPart", Doc: "add a synthetic thinking part before the first content part, copying the nearest earlier thinking text and signature; the brief's repair, only on request", OnlyOnRequest: true}
	stDelete  = Strategy{Name: "delete", Mutations: "deletePart", Doc: "remove the part (backed up)"}
	stAbort   = Strategy{Name: "abort", Mutations: "markToolAborted", Doc: "rewrite the tool to opencode's own abort shape"}
	stClose   = Strategy{Name: "close", Mutations: "markMessageAborted+markToolAborted", Doc: "close the message as aborted and abort its unfinished tools"}
	stQuar    = Strategy{Name: "quarantine", Mutations: "quarantine", Doc: "move the record (and an orphan message's parts) into the backup area"}
	stRekey   = Strategy{Name: "rekey", Mutations: "rekey", Doc: "give the record a valid id that sorts at the same position"}
	stRewrite = Strategy{Name: "rewrite", Mutations: "rewriteBodyIDs", Doc: "set the body's id, sessionID and messageID to the ones its path or row gives"}
	stFill    = Strategy{Name: "backfill", Mutations: "backfillSchemaFields", Doc: "write the value opencode itself writes into each missing key that has a safe default"}
	stDropKey = Strategy{Name: "drop", Mutations: "dropUnservableKey", Doc: "remove the key opencode cannot serve (backed up)"}
	stRepoint = Strategy{Name: "repoint", Mutations: "repointParent", Doc: "point parentID at the closest user message before the assistant message"}
	stProject = Strategy{Name: "project", Mutations: "setSessionProject", Doc: "point the session row at the project opencode resolves its directory to, when that project has a row"}
	stModel   = Strategy{Name: "model", Mutations: "setSessionModel", Doc: "give the session row the model your config makes opencode's default, when opencode has it"}
)

// strategyTable lists every rule's strategies in the order they are tried.
// Error-driven recovery (SF302, preflight findings) picks its strategies from
// the error's class; see errorStrategies.
var strategyTable = map[string][]Strategy{
	scan.SF101: {stReplace, stInject, stExclude},
	scan.SF102: {stInject, stExclude},
	scan.SF103: {stMove, stStrip, stExclude, stPrepend},
	scan.SF104: {stReplace, stDelete},
	scan.SF105: {stAbort, stExclude},
	scan.SF106: {stStrip, stExclude},
	scan.SF107: {stStrip, stExclude},
	scan.SF201: {stQuar},
	scan.SF202: {stRekey},
	scan.SF203: {stRewrite, stQuar, stRebuild},
	scan.SF205: {stDelete},
	scan.SF206: {stFill},
	scan.SF208: {stDropKey},
	scan.SF209: {stRepoint},
	scan.SF211: {stRekey},
	scan.SF212: {stProject},
	scan.SF213: {stModel},
	scan.SF301: {stClose, stExclude},
	scan.SF303: {stCutOff, stExclude},
	scan.SF304: {stGiveUp},
	scan.SF170: {stShrink, stPlaceholder},
	scan.SF171: {stShrink, stPlaceholder},
	scan.SF176: {stShrink, stPlaceholder},
	scan.SF173: {stPlaceholder},
	scan.SF175: {stPlaceholderPDF},
	scan.SF177: {stPlaceholderPages},
	scan.SF178: {stPlaceholder},
	scan.SF179: {stPlaceholderFresh},
	scan.SF180: {stShrinkFresh, stPlaceholderSize},
	scan.SF181: {stPlaceholderImage},
	scan.SF503: {stMoveOut},
	scan.SF172: {stPrune},
	scan.SF174: {stPruneContext},
	scan.SF302: {stMove, stStrip, stInject, stReplace, stAbort, stDropEncrypted, stDropItemIDs, stDropSignatures, stReasoning, stCutOff, stRekeyCallIDs, stRekeyToolUseIDs, stExclude, stPrepend},
}

// Strategies returns the strategies of a rule code in the order they are
// tried (nil when the rule has none: report-only). Preflight codes
// (SF150–SF169) share SF302's, but for a report-only preflight rule
// (SF158, SF159), which has none.
func Strategies(code string) []Strategy {
	code = strings.ToUpper(code)
	if isPreflight(code) {
		if r := scan.Lookup(code); r != nil && !r.Fixable {
			return nil
		}
		code = scan.SF302
	}
	return strategyTable[code]
}

// isPreflight reports the preflight codes that share SF302's repairs
// (SF150–SF169). The size rules SF170–SF189 are preflight rules too
// (scan.IsPreflightCode) but are not among them: SF170 and SF171 have
// their own repair (shrinkImage, then replaceMedia when the image does not
// decode), SF172 and SF174 OpenCode's prune of tool results
// (markToolCompacted), SF173, SF175, SF177 and SF178 the placeholder
// (replaceMedia), SF176 the shrink to each image's share of the request's
// limit.
func isPreflight(code string) bool {
	return scan.FamilyPreflight.Has(code)
}

// ValidateStrategies checks --strategy choices: known codes and names, and a
// non-empty name.
func ValidateStrategies(choice map[string]string) error {
	codes := make([]string, 0, len(choice))
	for c := range choice {
		codes = append(codes, c)
	}
	sort.Strings(codes)
	for _, c := range codes {
		name := choice[c]
		list := Strategies(c)
		if list == nil {
			return fmt.Errorf("rule %s has no repair strategies; see docs/fixing.md", c)
		}
		ok := false
		var names []string
		for _, s := range list {
			names = append(names, s.Name)
			ok = ok || s.Name == name
		}
		if !ok {
			return fmt.Errorf("unknown strategy %q for %s (want one of %s)", name, c, strings.Join(names, ", "))
		}
	}
	return nil
}

// ParseStrategies parses CODE=NAME pairs from the command line.
func ParseStrategies(pairs []string) (map[string]string, error) {
	out := map[string]string{}
	for _, p := range pairs {
		code, name, ok := strings.Cut(p, "=")
		code, name = strings.ToUpper(strings.TrimSpace(code)), strings.ToLower(strings.TrimSpace(name))
		if !ok || code == "" || name == "" {
			return nil, fmt.Errorf("--strategy %q: want CODE=NAME, e.g. SF103=strip", p)
		}
		out[code] = name
	}
	return out, ValidateStrategies(out)
}

// ruleStrats binds a rule finding to its strategies' plan functions.
func ruleStrats(f scan.Finding) []strat {
	var out []strat
	for _, st := range strategyTable[f.Code] {
		if fn := rulePlanFunc(f, st); fn != nil {
			out = append(out, strat{st, fn})
		}
	}
	return out
}

func rulePlanFunc(f scan.Finding, st Strategy) planFunc {
	if mut := messagePlanFunc(f, st); mut != nil {
		return func(w *work) ([]store.Edit, error) {
			m, err := w.message(f)
			if err != nil {
				return nil, err
			}
			return mut(w, m)
		}
	}
	if mut := partPlanFunc(st); mut != nil {
		return func(w *work) ([]store.Edit, error) {
			m, p, err := w.part(f)
			if err != nil {
				return nil, err
			}
			return mut(w, m, p)
		}
	}
	switch st {
	case stQuar:
		return func(w *work) ([]store.Edit, error) { return w.quarantine(f) }
	case stPrune:
		return func(w *work) ([]store.Edit, error) { return pruneToolImages(w.s, f.ProviderError, w.env) }
	case stPruneContext:
		return func(w *work) ([]store.Edit, error) {
			win, ok := opencode.WindowOf(w.s, w.opts.validation().OpenCode)
			if !ok {
				return nil, errNotApplicable
			}
			return pruneToolOutputs(w.s, win, w.env)
		}
	case stPlaceholderPDF:
		return func(w *work) ([]store.Edit, error) { return replaceRequestPDFs(w.s, w.env) }
	case stPlaceholderFresh:
		return func(w *work) ([]store.Edit, error) {
			return replaceFresh(w.s, opencode.ErrorPDFUnprocessable, true, whyNotProcessed, w.env)
		}
	case stPlaceholderImage:
		return func(w *work) ([]store.Edit, error) { return replaceFreshImages(w.s, w.env) }
	case stShrinkFresh:
		return func(w *work) ([]store.Edit, error) { return shrinkFresh(w.s, w.env) }
	case stPlaceholderSize:
		return func(w *work) ([]store.Edit, error) {
			return replaceFresh(w.s, opencode.ErrorRequestTooLarge, false, whyRefusedForSize, w.env)
		}
	case stPlaceholderPages:
		return func(w *work) ([]store.Edit, error) { return replacePDFPages(w.s, f.ProviderError, w.env) }
	case stRekey:
		return func(w *work) ([]store.Edit, error) {
			if f.PartID != "" {
				m, p, err := w.part(f)
				if err != nil {
					return nil, err
				}
				return rekey(w.s, m, p, w.env)
			}
			m, err := w.message(f)
			if err != nil {
				return nil, err
			}
			return rekey(w.s, m, nil, w.env)
		}
	case stRewrite:
		return func(w *work) ([]store.Edit, error) { return w.rewriteIDs(f) }
	case stRebuild:
		return func(w *work) ([]store.Edit, error) { return rebuildSessionRecord(w.s, w.opts.validation()) }
	case stProject:
		return func(w *work) ([]store.Edit, error) {
			project, ok := opencode.ProjectRepair(w.s, w.opts.validation().OpenCode)
			if !ok {
				return nil, errNotApplicable
			}
			return setSessionProject(w.s, project)
		}
	case stModel:
		return func(w *work) ([]store.Edit, error) {
			p, m, ok := opencode.ModelRepair(w.s, w.opts.validation().OpenCode)
			if !ok {
				return nil, errNotApplicable
			}
			return setSessionModel(w.s, p, m)
		}
	case stFill, stDropKey:
		mutate := backfillSchemaFields
		if st == stDropKey {
			mutate = dropUnservableKey
		}
		return func(w *work) ([]store.Edit, error) {
			m, p, err := w.record(f)
			if err != nil {
				return nil, err
			}
			return mutate(w.s, m, p)
		}
	}
	return nil
}

// messagePlanFunc is the repair of a strategy that changes the message
// the finding f names, nil for another strategy.
func messagePlanFunc(f scan.Finding, st Strategy) func(w *work, m *store.Message) ([]store.Edit, error) {
	switch st {
	case stReplace:
		return func(w *work, m *store.Message) ([]store.Edit, error) {
			if !hasBlankText(m) {
				return nil, errNotApplicable
			}
			return replaceEmptyTextParts(w.s, m, w.env.placeholder)
		}
	case stInject:
		return func(w *work, m *store.Message) ([]store.Edit, error) {
			return injectTextPart(w.s, m, w.env.placeholder, w.env)
		}
	case stExclude:
		return func(w *work, m *store.Message) ([]store.Edit, error) {
			if m.Role != "assistant" {
				return nil, errNotApplicable
			}
			return excludeMessage(w.s, m, excludeReason(f), w.env)
		}
	case stMove:
		return func(w *work, m *store.Message) ([]store.Edit, error) {
			if !opencode.OwnsSignedThinking(m) {
				return nil, errNotApplicable
			}
			return moveThinkingFirst(w.s, m, w.env)
		}
	case stStrip:
		return func(w *work, m *store.Message) ([]store.Edit, error) {
			var which func(*store.Part) bool
			if f.Code == scan.SF107 {
				which = func(p *store.Part) bool {
					if f.PartID != "" {
						return p.ID == f.PartID
					}
					return !opencode.IsSigned(p)
				}
			}
			return stripThinkingParts(w.s, m, which)
		}
	case stPrepend:
		return func(w *work, m *store.Message) ([]store.Edit, error) {
			return prependThinkingPart(w.s, m, w.env)
		}
	case stClose:
		return func(w *work, m *store.Message) ([]store.Edit, error) {
			eds, err := markMessageAborted(w.s, m, w.env)
			if err != nil {
				return nil, err
			}
			for _, p := range m.Parts {
				more, err := markToolAborted(w.s, m, p, w.env)
				if err != nil {
					return nil, err
				}
				eds = append(eds, more...)
			}
			return eds, nil
		}
	case stRepoint:
		return func(w *work, m *store.Message) ([]store.Edit, error) { return repointParent(w.s, m) }
	case stGiveUp:
		return func(w *work, m *store.Message) ([]store.Edit, error) { return finishFailedCompaction(w.s, m, w.env) }
	}
	return nil
}

// partPlanFunc is the repair of a strategy that changes the part the
// finding names, nil for another strategy.
func partPlanFunc(st Strategy) func(w *work, m *store.Message, p *store.Part) ([]store.Edit, error) {
	switch st {
	case stDelete:
		return func(w *work, m *store.Message, p *store.Part) ([]store.Edit, error) { return deletePart(w.s, m, p) }
	case stAbort:
		return func(w *work, m *store.Message, p *store.Part) ([]store.Edit, error) {
			return markToolAborted(w.s, m, p, w.env)
		}
	case stCutOff:
		return func(w *work, m *store.Message, p *store.Part) ([]store.Edit, error) {
			return markToolCutOff(m, p, w.env)
		}
	case stShrink:
		return func(w *work, m *store.Message, p *store.Part) ([]store.Edit, error) { return shrinkImage(w.s, m, p) }
	case stMoveOut:
		return func(w *work, m *store.Message, p *store.Part) ([]store.Edit, error) {
			return moveOutPayload(w.s, m, p, w.env)
		}
	case stPlaceholder:
		return func(w *work, m *store.Message, p *store.Part) ([]store.Edit, error) {
			return replaceMedia(w.s, m, p, w.env)
		}
	}
	return nil
}

func hasBlankText(m *store.Message) bool {
	for _, p := range m.Parts {
		if opencode.IsBlankText(p) {
			return true
		}
	}
	return false
}

// excludeReason is the reason written into an excluded message's error,
// after "excluded by sessfix: ": what is wrong with the message, never
// empty (OpenCode shows it on the message).
func excludeReason(f scan.Finding) string {
	switch {
	case f.Message != "":
		return f.Message
	case f.Rule != "":
		return f.Rule
	case f.Code != "":
		return "see `sessfix explain " + f.Code + "`"
	}
	return "the provider rejects this message"
}
