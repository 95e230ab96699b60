package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/sessfix/sessfix/internal/opencodetest"
	"github.com/sessfix/sessfix/internal/opencodetest/mockopenai"
)

// session is one recorded session of a titled store: a new session with the
// first prompt, each later prompt sent with --session, all with one model.
type session struct {
	title   string
	model   string
	prompts []string
}

const (
	promptLoop   = "Please run a command for me [[tool:bash echo hello from bash]]"
	promptSecond = "And what about table-driven tests?"
)

// titledStores are the sessions of the families answered by mockopenai, by
// family name; the store is testdata/real/opencode-1.18.33-<name> and each
// session's title names it.
var titledStores = map[string][]session{
	"openai-compatible": {
		{"deepseek tool loop", opencodetest.DeepSeekModel, []string{promptLoop}},
		{"deepseek two turns", opencodetest.DeepSeekModel, []string{promptLoop, promptSecond}},
		{"deepseek-chat tool loop", opencodetest.DeepSeekChat, []string{promptLoop}},
		{"kimi tool loop", opencodetest.KimiModel, []string{promptLoop}},
		{"kimi-custom tool loop", opencodetest.KimiCustomModel, []string{promptLoop}},
		{"kimi-custom two turns", opencodetest.KimiCustomModel, []string{promptLoop, promptSecond}},
	},
	"openai-responses": {
		{"openai tool loop", opencodetest.OpenAIModel, []string{promptLoop}},
		{"openai two turns", opencodetest.OpenAIModel, []string{promptLoop, promptSecond}},
	},
	// OpenCode Zen's GPT models, which 1.18.33 sends through
	// @ai-sdk/openai like the openai provider's.
	"zen": {
		{"zen tool loop", opencodetest.ZenOpenAIModel, []string{promptLoop}},
		{"zen two turns", opencodetest.ZenOpenAIModel, []string{promptLoop, promptSecond}},
	},
}

// recordTitled records one titled store with 1.18.33. The mock checks the
// thinking rule on every turn (mockopenai.ScopeAllTurns), the strictest
// reading: healthy sessions pass it.
func recordTitled(name string, sessions []session, outRoot string) error {
	mock := mockopenai.New(mockopenai.Config{ReasoningScope: mockopenai.ScopeAllTurns})
	defer mock.Close()
	var providers []string
	for _, s := range sessions {
		p, err := opencodetest.ProviderOf(s.model)
		if err != nil {
			return err
		}
		providers = append(providers, p.ID)
	}
	e, err := opencodetest.New(opencodetest.Options{Model: sessions[0].model, Providers: providers, OpenAI: mock})
	if err != nil {
		return err
	}
	defer e.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	for _, s := range sessions {
		id := ""
		for _, prompt := range s.prompts {
			var res *opencodetest.Result
			if id == "" {
				res, err = e.Prompt(ctx, prompt, "--title", s.title, "--model", s.model)
			} else {
				res, err = e.Resume(ctx, id, prompt, "--model", s.model)
			}
			if err != nil {
				return err
			}
			if res.ExitCode != 0 || res.SessionID == "" {
				return fmt.Errorf("%s: run failed\n%s", s.title, res)
			}
			id = res.SessionID
			log.Printf("%s: %q -> %s (%s)", s.title, prompt, id, res.Duration.Round(time.Millisecond))
		}
	}
	for _, r := range mock.Requests() {
		if r.Verdict != mockopenai.Accepted {
			return fmt.Errorf("mock rejected request %d: %s", r.Index, r.Error)
		}
	}
	return save(e, filepath.Join(outRoot, "opencode-"+opencodetest.V1_18+"-"+name), len(sessions))
}

// save replaces dst with the Env's session data and checks that the copy
// reads back with n sessions.
func save(e *opencodetest.Env, dst string, n int) error {
	if err := os.RemoveAll(dst); err != nil {
		return err
	}
	if err := e.SaveData(dst); err != nil {
		return err
	}
	ids, err := opencodetest.Sessions(dst)
	if err != nil {
		return fmt.Errorf("reading the copy: %w", err)
	}
	if len(ids) != n {
		return fmt.Errorf("copy holds %d sessions, want %d", len(ids), n)
	}
	for _, id := range ids {
		msgs, err := opencodetest.LoadSession(dst, id)
		if err != nil || len(msgs) == 0 {
			return fmt.Errorf("reading session %s from the copy: %v", id, err)
		}
	}
	return nil
}
