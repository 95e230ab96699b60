package scan

import (
	"fmt"

	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/sent"
)

var ruleSF174 = &Rule{
	Code:      SF174,
	Name:      "context-window-exceeded",
	Severity:  Error,
	Lower:     Warning,
	LowerWhen: "a request over the window only by sessfix's conservative estimate, or a window known only as the largest prompt the provider accepted",
	Summary:   "the history the next request sends is over the model's context window",
	What: "sessfix estimates the tokens of the request a resume sends (the history as OpenCode 1.18.33 converts it, and the next prompt) and " +
		"compares them with the model's context window. The window is the provider's own number when the session stores an error that prints it " +
		"(Anthropic's `prompt is too long: N tokens > M maximum` or `exceed context limit: N + K > M`, OpenAI's `maximum context length is M tokens`, Gemini's `The input token count (N) exceeds the maximum number of tokens allowed (M)`; " +
		"the Responses API's `Your input exceeds the context window of this model` prints none); " +
		"else OpenCode's model data: your config's `provider.<id>.models.<id>.limit.context`, then the models catalogue OpenCode caches " +
		"(`$OPENCODE_MODELS_PATH`, else `~/.cache/opencode/models.json`). The window is at least the largest prompt the provider accepted in the " +
		"session: that is taken instead of model data that says less, and, when nothing else says and the session's newest error is a context " +
		"overflow, as the window. Without a window nothing is checked.\n\n" +
		"The estimate: the newest assistant message the request re-sends that stores its token usage gives the base, counted by the provider " +
		"itself (`tokens.input` + `tokens.cache.read` + `tokens.cache.write`, the whole prompt it was sent, with the system prompt and tool " +
		"definitions, and `tokens.output`, its answer); what the request sends after that answer (its tool results, later messages) is counted " +
		"from its bytes at 3 bytes a token (48 bytes more a block for its JSON), an image at 1,600 tokens. Real tokenizers average 3.5 to 4 bytes a " +
		"token on English text and code, so the estimate is above the provider's count on such text; the lab's mock counts 4 bytes a token of the " +
		"whole request body. Without stored usage every block is counted from its bytes and the system prompt and tools are not counted.\n\n" +
		"The finding is an error when even 4 bytes a token puts the request over the window; a warning when only the conservative estimate does, " +
		"or when the window is only the largest prompt the provider accepted. OpenCode itself compacts a session whose stored usage reaches the " +
		"window less the answer's reserve (min(`limit.output`, 32000)); a session is dead when that cannot happen: `compaction.auto: false` in " +
		"your config (OpenCode then stores `ContextOverflowError` with the provider's text on the turn and every prompt fails), or a window " +
		"smaller than the session's history (a model switched to one with a smaller window).",
	Why: "OpenCode re-sends the whole history on every prompt: the provider refuses every one of them until the history is shorter.",
	ProviderError: "prompt is too long: 212345 tokens > 200000 maximum (Anthropic, Bedrock); This model's maximum context length is 128000 tokens. " +
		"However, your messages resulted in 130512 tokens. Please reduce the length of the messages. (OpenAI Chat Completions, `context_length_exceeded`); " +
		"Your input exceeds the context window of this model. Please adjust your input and try again. (OpenAI Responses API, `context_length_exceeded`); " +
		"The input token count (1200293) exceeds the maximum number of tokens allowed (1048576). (Gemini, `INVALID_ARGUMENT`)",
	FixDoc: "`markToolCompacted`, OpenCode's own prune: sessfix marks completed tool results compacted (`state.time.compacted`, which OpenCode " +
		"sets when it prunes; it then sends `[Old tool result content cleared]` instead of the output), the oldest turn first and within a turn " +
		"the largest output first, until the estimate is under 90% of the context OpenCode lets a request use (the window less the answer's " +
		"reserve; less `min(20000, reserve)` from `limit.input` when the model has one). A tool result whose compaction takes off the base is " +
		"counted off at 4 bytes a token, so the margin only grows. Never touched: the turn a resume continues without a new prompt, `skill` " +
		"results (OpenCode's prune keeps them), the user's messages and attachments, any text. The model no longer sees the cleared outputs; " +
		"everything else stays, and `sessfix undo` puts them back. When compacting every candidate is not enough (the user's own text, or the " +
		"turn in progress, is over the window), nothing is changed and the finding stays: shorten the history with `sessfix rewind` or `fork`.",
	Fixable: true,
	Fix:     "markToolCompacted",
	Check:   checkContextWindow,
}

func checkContextWindow(c *Context) {
	s := c.Session
	if len(s.Messages) == 0 {
		return
	}
	w, ok := opencode.WindowOf(s, c.Opts.OpenCode)
	if !ok {
		return
	}
	c.preflight()
	reqs := c.shared().reqs
	if len(reqs) == 0 {
		return // the session may still be streaming: its request is not final
	}
	r := reqs[0]
	est := opencode.EstimateContext(s, r, nil)
	if est.Tokens <= w.Context {
		return
	}
	last := s.Messages[len(s.Messages)-1]
	f := At(last, nil)
	f.ErrorType = string(opencode.ErrorContextOverflow)
	f.ProviderError = contextError(r.Kind, est.Tokens, w.Context)
	f.Message = fmt.Sprintf("the next request holds about %d tokens, over the model's %d-token context window (from %s)", est.Tokens, w.Context, w.Source)
	if est.Base != "" {
		f.Message += fmt.Sprintf("; the provider counted %d of them for message %s", est.Measured, est.Base)
	} else {
		f.Message += "; counted from the stored text alone, without the system prompt and tools"
	}
	if est.Low <= w.Context || w.LowerBound {
		f.Severity = Warning
		f.Message += "; an estimate"
	}
	if _, fits := opencode.PruneForWindow(s, r, w); !fits {
		f.Message += "; compacting every older tool result is not enough"
		c.reportNoFix(f)
		return
	}
	c.Report(f)
}

// contextError is the error the provider family answers a request of n
// tokens over a window of limit tokens with.
func contextError(k sent.Family, n, limit int) string {
	switch k {
	case sent.Chat:
		return fmt.Sprintf("This model's maximum context length is %d tokens. However, your messages resulted in %d tokens. Please reduce the length of the messages.", limit, n)
	case sent.Responses:
		return "Your input exceeds the context window of this model. Please adjust your input and try again."
	case sent.Google:
		return fmt.Sprintf("The input token count (%d) exceeds the maximum number of tokens allowed (%d).", n, limit)
	}
	return fmt.Sprintf("prompt is too long: %d tokens > %d maximum", n, limit)
}
