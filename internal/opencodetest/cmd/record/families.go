package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"path/filepath"
	"strings"
	"time"

	"github.com/sessfix/sessfix/internal/opencodetest"
	"github.com/sessfix/sessfix/internal/opencodetest/mockbedrock"
	"github.com/sessfix/sessfix/internal/opencodetest/mockgemini"
)

var familiesFlag = flag.String("families", "google,amazon-bedrock,openai-compatible,openai-responses,zen,zen-gemini",
	"provider families to record with OpenCode "+opencodetest.V1_18+" into testdata/real/opencode-"+opencodetest.V1_18+"-<family>/ (empty: none)")

// familyModels are the models the recorded families run, by provider id.
var familyModels = map[string]string{
	"google":         opencodetest.GoogleModel,
	"amazon-bedrock": opencodetest.BedrockModel,
	// OpenCode Zen's Gemini model, which 1.18.33 sends through
	// @ai-sdk/google like the google provider's.
	"zen-gemini": opencodetest.ZenGoogleModel,
}

// recordFamilies records, for each family of -families, a bash tool loop
// and a two-turn session with reasoning, the mock signing with its default
// secret (mockgemini.DefaultSecret, mockbedrock.DefaultSecret).
func recordFamilies(outRoot string) error {
	if *familiesFlag == "" {
		return nil
	}
	for _, fam := range strings.Split(*familiesFlag, ",") {
		fam = strings.TrimSpace(fam)
		model, ok := familyModels[fam]
		sessions, titled := titledStores[fam]
		if !ok && !titled {
			return fmt.Errorf("unknown family %q (known: google, amazon-bedrock, openai-compatible, openai-responses, zen, zen-gemini)", fam)
		}
		start := time.Now()
		record := func() error { return recordFamily(fam, model, outRoot) }
		if titled {
			record = func() error { return recordTitled(fam, sessions, outRoot) }
		}
		if err := record(); err != nil {
			return fmt.Errorf("%s: %w", fam, err)
		}
		log.Printf("%s: recorded in %s", fam, time.Since(start).Round(time.Second))
	}
	return nil
}

func recordFamily(fam, model, outRoot string) error {
	opts := opencodetest.Options{Model: model}
	if strings.HasPrefix(model, "opencode/") {
		// Zen serves every package at one base URL; the harness's
		// `opencode` entry points at one family's mock, so OpenCode's
		// title requests (its small model, a GPT model for Zen) are
		// sent with the same model.
		opts.Config = map[string]any{"small_model": model}
	}
	f, err := opencodetest.New(opts)
	if err != nil {
		return err
	}
	defer f.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if err := runSteps(ctx, f, fam, []step{
		{false, "Please run a command for me [[tool:bash echo hello from bash]]"},
		{false, "Let's talk about Go testing."},
		{true, "And what about table-driven tests?"},
	}); err != nil {
		return err
	}
	for _, r := range f.Gemini.Requests() {
		if r.Verdict != mockgemini.Accepted {
			return fmt.Errorf("gemini mock rejected request %d (%s, agent %v): %s", r.Index, r.Path, r.Chat, r.Error)
		}
	}
	for _, r := range f.Bedrock.Requests() {
		if r.Verdict != mockbedrock.Accepted {
			return fmt.Errorf("bedrock mock rejected request %d: %s", r.Index, r.Error)
		}
	}
	return save(f, filepath.Join(outRoot, "opencode-"+opencodetest.V1_18+"-"+fam), 2)
}
