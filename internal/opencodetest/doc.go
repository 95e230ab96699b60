// Package opencodetest drives real OpenCode binaries in tests, offline.
//
// Install puts a pinned opencode-ai release from npm under the repository's
// git-ignored .cache/opencode/<version>/ (once; concurrent installs are safe)
// and returns its native binary. New (or NewT in tests) creates an Env: a
// throw-away HOME with its own XDG directories, a global opencode.json whose
// providers point at local mocks, and a project directory that is both the
// working directory and $PWD of every command (OpenCode records a session's
// directory from $PWD).
//
// Providers come in families (Family): the anthropic provider (Anthropic
// Messages API) is answered by Env.Mock, a mockanthropic.Server; the
// deepseek, moonshotai and kimi providers (ChatCompletions: OpenAI-compatible
// Chat Completions with reasoning_content) and the openai provider
// (Responses API) by Env.OpenAI, a mockopenai.Server; the google provider
// (Gemini, GoogleModel) by Env.Gemini, a mockgemini.Server; the
// amazon-bedrock provider (Bedrock Converse, BedrockModel) by Env.Bedrock, a
// mockbedrock.Server. Options.Model picks the default model
// ("provider/model", see Providers and the *Model constants); anthropic and
// the model's provider are always configured, Options.Providers adds more so
// a run can switch with "--model". Thinking or reasoning is on for every
// family: anthropic and Claude on Bedrock through the model's thinking or
// reasoningConfig option, the others by the models' own defaults in
// OpenCode's catalogue.
//
// Typical use:
//
//	e := opencodetest.NewT(t, opencodetest.Options{Version: opencodetest.V1_18})
//	res, err := e.Prompt(ctx, "list files [[tool:bash ls]]")   // new session
//	res, err = e.Resume(ctx, res.SessionID, "and now?")           // same session
//	doc, _, err := e.Export(ctx, res.SessionID)
//	// e.DBPath() (1.18) or e.StorageDir() (1.1) now hold real data; e.Mock
//	// has every request OpenCode sent and its verdict.
//
//	d := opencodetest.NewT(t, opencodetest.Options{Model: opencodetest.DeepSeekModel,
//		Providers: []string{"openai"}})
//	res, err = d.Prompt(ctx, "hello")                                    // deepseek
//	res, err = d.Resume(ctx, res.SessionID, "hi", "--model", opencodetest.OpenAIModel)
//	// d.OpenAI.Requests() holds both providers' requests (Request.Dialect).
//
// To leave a session the way a crash does, start OpenCode in the background,
// hold the mock's stream at a stage and kill the process there, once
// OpenCode has stored what the test is after:
//
//	p := e.Mock.Pause(mockanthropic.StageTextDelta, mockanthropic.ChatRequest) // or e.OpenAI.Pause, e.Gemini.Pause, e.Bedrock.Pause
//	defer p.Release()
//	proc, _ := e.StartPrompt("", "hello")
//	err := proc.KillAt(ctx, p, func() bool { … }) // SIGKILL to OpenCode's process group
//
// Environment, config and observed behaviour are written down in
// OBSERVED.md next to this file.
package opencodetest
