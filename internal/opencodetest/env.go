package opencodetest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/sessfix/sessfix/internal/opencodetest/mockanthropic"
	"github.com/sessfix/sessfix/internal/opencodetest/mockbedrock"
	"github.com/sessfix/sessfix/internal/opencodetest/mockgemini"
	"github.com/sessfix/sessfix/internal/opencodetest/mockopenai"
	"github.com/sessfix/sessfix/internal/opencodetest/ocrelease"
)

// DefaultModel is the model the harness configures: OpenCode's bundled model
// list knows it as reasoning-capable, and the config below turns thinking on
// for it explicitly (1.18.33 does not enable thinking by default).
const DefaultModel = "anthropic/claude-sonnet-4-5"

// DefaultTimeout bounds one OpenCode command.
var DefaultTimeout = 2 * time.Minute

// Options configures an Env.
type Options struct {
	// Version is the OpenCode version (V1_18 when empty).
	Version string
	// Mock answers the anthropic provider; nil starts a fresh mock that
	// the Env closes.
	Mock *mockanthropic.Server
	// OpenAI answers the providers of the ChatCompletions and Responses
	// families; nil starts a fresh mock that the Env closes.
	OpenAI *mockopenai.Server
	// Gemini answers the google provider and Bedrock the amazon-bedrock
	// provider; nil starts fresh mocks that the Env closes.
	Gemini  *mockgemini.Server
	Bedrock *mockbedrock.Server
	// Model is "provider/model" (DefaultModel when empty); its provider
	// must be one of Providers. It is the config's default model; a run
	// picks another with "--model provider/model".
	Model string
	// Providers are more provider ids (keys of Providers) to configure
	// besides anthropic and the model's own, so runs can switch to them.
	Providers []string
	// APIKeys overrides the API key written for a provider id (the mocks
	// treat the key as the account).
	APIKeys map[string]string
	// ModelOptions are written as the "options" of a model's entry, by
	// "provider/model" (e.g. {"openai/gpt-5.2": {"store": true}}).
	ModelOptions map[string]map[string]any
	// ModelLimits are written as the "limit" of a model's entry, by
	// "provider/model" (e.g. {"anthropic/claude-sonnet-4-5": {"context":
	// 44000, "output": 4000}}): OpenCode then takes the model's window
	// from the config.
	ModelLimits map[string]map[string]int
	// ThinkingBudget is the budget_tokens OpenCode sends; 0 means 16000,
	// a negative value leaves thinking off (OpenCode's default).
	ThinkingBudget int
	// Timeout bounds each command (DefaultTimeout when zero).
	Timeout time.Duration
	// Config is merged over the generated opencode.json (top-level keys).
	Config map[string]any
	// Env holds extra KEY=VALUE pairs for every command.
	Env []string
}

// Env is an isolated OpenCode installation: its own HOME and XDG dirs, a
// global opencode.json that points the anthropic provider at a mock, and a
// project directory commands run in.
type Env struct {
	Version    string
	Bin        string
	Model      string
	Root       string // temp root; HOME is Root/home
	Home       string
	DataHome   string // XDG_DATA_HOME
	ConfigHome string // XDG_CONFIG_HOME
	CacheHome  string // XDG_CACHE_HOME
	StateHome  string // XDG_STATE_HOME
	ProjectDir string // working directory and $PWD of every command
	TempDir    string // $TMPDIR of every command
	Mock       *mockanthropic.Server
	OpenAI     *mockopenai.Server
	Gemini     *mockgemini.Server
	Bedrock    *mockbedrock.Server
	Timeout    time.Duration

	opts       Options
	ownMock    bool
	ownOpenAI  bool
	ownGemini  bool
	ownBedrock bool
	extra      []string
}

// New installs (or reuses) the OpenCode version and sets up an Env in a new
// temporary directory. Close removes it.
func New(opts Options) (*Env, error) {
	if opts.Version == "" {
		opts.Version = V1_18
	}
	bin, err := Install(opts.Version)
	if err != nil {
		return nil, err
	}
	root, err := os.MkdirTemp("", "opencodetest-")
	if err != nil {
		return nil, err
	}
	e := &Env{
		Version: opts.Version, Bin: bin, Model: opts.Model, Root: root,
		Home: filepath.Join(root, "home"), Timeout: opts.Timeout, extra: opts.Env,
	}
	if e.Model == "" {
		e.Model = DefaultModel
	}
	if e.Timeout == 0 {
		e.Timeout = DefaultTimeout
	}
	e.DataHome = filepath.Join(e.Home, ".local", "share")
	e.ConfigHome = filepath.Join(e.Home, ".config")
	e.CacheHome = filepath.Join(e.Home, ".cache")
	e.StateHome = filepath.Join(e.Home, ".local", "state")
	e.ProjectDir = filepath.Join(root, "project")
	e.TempDir = filepath.Join(root, "tmp")
	for _, d := range []string{e.DataHome, filepath.Join(e.ConfigHome, "opencode"), e.CacheHome, e.StateHome, e.ProjectDir, e.TempDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			os.RemoveAll(root)
			return nil, err
		}
	}
	e.Mock = opts.Mock
	if e.Mock == nil {
		e.Mock = mockanthropic.New(mockanthropic.Config{})
		e.ownMock = true
	}
	e.OpenAI = opts.OpenAI
	if e.OpenAI == nil {
		e.OpenAI = mockopenai.New(mockopenai.Config{})
		e.ownOpenAI = true
	}
	e.Gemini, e.ownGemini = opts.Gemini, opts.Gemini == nil
	if e.ownGemini {
		e.Gemini = mockgemini.New(mockgemini.Config{})
	}
	e.Bedrock, e.ownBedrock = opts.Bedrock, opts.Bedrock == nil
	if e.ownBedrock {
		e.Bedrock = mockbedrock.New(mockbedrock.Config{})
	}
	if err := e.writeConfig(opts); err != nil {
		e.Close()
		return nil, err
	}
	return e, nil
}

// TB is the part of testing.TB that NewT uses.
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
	Cleanup(func())
}

// NewT is New for tests: it fails the test on error and closes the Env at
// cleanup.
func NewT(t TB, opts Options) *Env {
	t.Helper()
	e, err := New(opts)
	if err != nil {
		t.Fatalf("opencodetest: %v", err)
	}
	t.Cleanup(e.Close)
	return e
}

// Close stops the Env's own mocks and removes its directory.
func (e *Env) Close() {
	if e.ownMock && e.Mock != nil {
		e.Mock.Close()
	}
	if e.ownOpenAI && e.OpenAI != nil {
		e.OpenAI.Close()
	}
	if e.ownGemini && e.Gemini != nil {
		e.Gemini.Close()
	}
	if e.ownBedrock && e.Bedrock != nil {
		e.Bedrock.Close()
	}
	os.RemoveAll(e.Root)
}

// DataDir is OpenCode's data directory, $XDG_DATA_HOME/opencode.
func (e *Env) DataDir() string { return filepath.Join(e.DataHome, "opencode") }

// DBPath is where 1.2+ keeps its SQLite database: opencode.db, or a
// channel build's opencode-<channel>.db.
func (e *Env) DBPath() string {
	if ocrelease.IsChannel(e.Version) {
		return filepath.Join(e.DataDir(), "opencode-dev.db")
	}
	return filepath.Join(e.DataDir(), "opencode.db")
}

// DBFile is the database of a data dir: opencode.db, else the first
// channel build's opencode-<channel>.db there, else opencode.db (which
// does not exist).
func DBFile(dataDir string) string {
	db := filepath.Join(dataDir, "opencode.db")
	if _, err := os.Stat(db); err == nil {
		return db
	}
	if m, _ := filepath.Glob(filepath.Join(dataDir, "opencode-*.db")); len(m) > 0 {
		return m[0]
	}
	return db
}

// StorageDir is the JSON storage tree of 1.0–1.1.
func (e *Env) StorageDir() string { return filepath.Join(e.DataDir(), "storage") }

// LoadData copies a recorded data dir (e.g. testdata/real/opencode-1.18.33:
// an opencode.db and/or a storage/ tree) into the Env's data dir, so real
// OpenCode can be run against it.
func (e *Env) LoadData(src string) error {
	return CopyTree(src, e.DataDir())
}

// SaveData copies the Env's session data to dst in the shape LoadData
// reads: opencode.db alone (checkpointed first, which also takes the Env's
// database out of WAL mode, so no -wal/-shm is needed) or the storage/ tree.
func (e *Env) SaveData(dst string) error {
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	if _, err := os.Stat(e.DBPath()); err == nil {
		if err := Checkpoint(e.DBPath()); err != nil {
			return err
		}
		b, err := os.ReadFile(e.DBPath())
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, "opencode.db"), b, 0o644)
	}
	return CopyTree(e.StorageDir(), filepath.Join(dst, "storage"))
}

// CopyTree copies the regular files under src to dst, creating directories.
func CopyTree(src, dst string) error { return ocrelease.CopyTree(src, dst) }

// ConfigPath is the global config file the Env wrote.
func (e *Env) ConfigPath() string { return filepath.Join(e.ConfigHome, "opencode", "opencode.json") }

// Configure changes the Env's options and writes opencode.json again, e.g.
// to switch a provider's API key (account) between runs. Version, mocks and
// Env are not changed.
func (e *Env) Configure(change func(o *Options)) error {
	opts := e.opts
	opts.APIKeys = maps.Clone(opts.APIKeys)
	opts.ModelOptions = maps.Clone(opts.ModelOptions)
	opts.Providers = slices.Clone(opts.Providers)
	change(&opts)
	if opts.Model != "" {
		e.Model = opts.Model
	}
	return e.writeConfig(opts)
}

// APIKey is the API key the config gives a provider.
func (e *Env) APIKey(provider string) string {
	if k, ok := e.opts.APIKeys[provider]; ok {
		return k
	}
	return Providers[provider].APIKey
}

// providerEntry is the opencode.json entry of one provider.
func (e *Env) providerEntry(p Provider, opts Options) map[string]any {
	key := p.APIKey
	if k, ok := opts.APIKeys[p.ID]; ok {
		key = k
	}
	entry := map[string]any{}
	models := map[string]any{}
	switch p.Family {
	case Gemini, Bedrock:
		e.googleBedrockEntry(p, key, opts, entry, models)
	case Anthropic:
		entry["options"] = map[string]any{"baseURL": e.Mock.BaseURL(), "apiKey": key}
		budget := opts.ThinkingBudget
		if budget == 0 {
			budget = 16000
		}
		if provider, model, _ := strings.Cut(e.Model, "/"); provider == p.ID && budget > 0 {
			models[model] = map[string]any{"options": map[string]any{
				"thinking": map[string]any{"type": "enabled", "budgetTokens": budget},
			}}
		}
	default:
		entry["options"] = map[string]any{"baseURL": e.OpenAI.BaseURL(p.Dialect), "apiKey": key}
	}
	if p.NPM != "" {
		entry["npm"] = p.NPM
	}
	if p.Name != "" {
		entry["name"] = p.Name
	}
	for id, decl := range p.Declare {
		models[id] = maps.Clone(decl)
	}
	for full, o := range opts.ModelOptions {
		setModelField(models, p.ID, full, "options", o)
	}
	for full, l := range opts.ModelLimits {
		setModelField(models, p.ID, full, "limit", l)
	}
	if len(models) > 0 {
		entry["models"] = models
	}
	return entry
}

func (e *Env) writeConfig(opts Options) error {
	main, err := ProviderOf(e.Model)
	if err != nil {
		return err
	}
	providers := map[string]any{}
	for _, id := range append([]string{"anthropic", main.ID}, opts.Providers...) {
		p, ok := Providers[id]
		if !ok {
			return fmt.Errorf("the harness does not configure provider %q", id)
		}
		if id == main.ID {
			p = main // the family of the Env's model
		}
		providers[id] = e.providerEntry(p, opts)
	}
	e.opts = opts
	cfg := map[string]any{
		"$schema":    "https://opencode.ai/config.json",
		"model":      e.Model,
		"autoupdate": false,
		"share":      "disabled",
		"permission": map[string]any{"bash": "allow", "edit": "allow", "webfetch": "allow"},
		"provider":   providers,
	}
	for k, v := range opts.Config {
		cfg[k] = v
	}
	b, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(e.ConfigPath(), b, 0o644)
}

// Environ is the complete environment OpenCode runs with: nothing is
// inherited but PATH, so no real credentials or user config leak in.
func (e *Env) Environ() []string {
	cache, _ := CacheDir()
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + e.Home,
		"USER=opencodetest",
		"LANG=C.UTF-8",
		"TERM=dumb",
		"NO_COLOR=1",
		// OpenCode's runtime unpacks a native library into TMPDIR at
		// every start and leaves it there (~5 MB a run, OBSERVED.md):
		// the Env's own folder goes with the Env.
		"TMPDIR=" + e.TempDir,
		"PWD=" + e.ProjectDir,
		"XDG_DATA_HOME=" + e.DataHome,
		"XDG_CONFIG_HOME=" + e.ConfigHome,
		"XDG_CACHE_HOME=" + e.CacheHome,
		"XDG_STATE_HOME=" + e.StateHome,
		"OPENCODE_DISABLE_AUTOUPDATE=1",
		"OPENCODE_DISABLE_MODELS_FETCH=1",
		"OPENCODE_DISABLE_SHARE=1",
		"OPENCODE_DISABLE_LSP_DOWNLOAD=1",
		"OPENCODE_DISABLE_DEFAULT_PLUGINS=1",
		"OPENCODE_DISABLE_CLAUDE_CODE=1",
		"OPENCODE_DISABLE_TERMINAL_TITLE=1",
		// OpenCode's runtime (Bun, on JavaScriptCore) reads JSC options
		// from BUN_JSC_* variables. Each OpenCode command of the suite
		// lives for seconds, too short for JSC's optimizing FTL tier and
		// its background compiler threads to pay for themselves: without
		// them a prompt-and-two-resumes run costs about a fifth less CPU
		// (OBSERVED.md, "CPU per OpenCode command"), and the suite is
		// bound by OpenCode's CPU. JIT tiers change how fast the same
		// code runs, never what it does.
		"BUN_JSC_useFTLJIT=0",
		"BUN_JSC_useConcurrentJIT=0",
		// Runtime package installs (1.18 looks up @opencode-ai/plugin for
		// the config dir) go through these caches, shared across Envs.
		"npm_config_cache=" + filepath.Join(filepath.Dir(cache), "npm"),
		"BUN_INSTALL_CACHE_DIR=" + filepath.Join(filepath.Dir(cache), "bun"),
		// The amazon-bedrock provider's credentials (a Bedrock API key).
		"AWS_BEARER_TOKEN_BEDROCK=" + e.APIKey("amazon-bedrock"),
	}
	return append(env, e.extra...)
}

// Result is the outcome of one finished command.
type Result struct {
	Args     []string
	Stdout   string
	Stderr   string
	ExitCode int // -1 when killed by a signal
	Duration time.Duration
	// SessionID is the session a `run --format json` worked on, when seen.
	SessionID string
}

func (r *Result) String() string {
	return fmt.Sprintf("opencode %s: exit %d after %s\nstdout:\n%s\nstderr:\n%s",
		strings.Join(r.Args, " "), r.ExitCode, r.Duration.Round(time.Millisecond), r.Stdout, r.Stderr)
}

// Err is nil when the command exited 0.
func (r *Result) Err() error {
	if r.ExitCode == 0 {
		return nil
	}
	return errors.New(r.String())
}

var sessionIDRe = regexp.MustCompile(`"sessionID"\s*:\s*"(ses_[0-9A-Za-z]+)"`)

func parseSessionID(stdout string) string {
	if m := sessionIDRe.FindStringSubmatch(stdout); m != nil {
		return m[1]
	}
	return ""
}

// Command builds an *exec.Cmd for opencode with the Env's environment, in the
// project directory, in its own process group.
func (e *Env) Command(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, e.Bin, args...)
	cmd.Dir = e.ProjectDir
	cmd.Env = e.Environ()
	setProcessGroup(cmd)
	return cmd
}

// Run runs opencode with args until it exits or the Env's timeout passes
// (then the whole process group is killed and the result has ExitCode -1).
// A non-zero exit is not an error: inspect Result.ExitCode.
func (e *Env) Run(ctx context.Context, args ...string) (*Result, error) {
	ctx, cancel := context.WithTimeout(ctx, e.Timeout)
	defer cancel()
	p, err := e.start(ctx, args)
	if err != nil {
		return nil, err
	}
	res, err := p.Wait()
	if err != nil {
		return res, err
	}
	if ctx.Err() != nil {
		return res, fmt.Errorf("opencode %s: %w\n%s", strings.Join(args, " "), ctx.Err(), res)
	}
	return res, nil
}

// runArgs builds `run --format json [--session id] [extra…] prompt`.
func runArgs(session, prompt string, extra []string) []string {
	args := []string{"run", "--format", "json"}
	if session != "" {
		args = append(args, "--session", session)
	}
	args = append(args, extra...)
	return append(args, prompt)
}

// Prompt runs `opencode run --format json [extra…] prompt` in a new session.
// Result.SessionID names the session.
func (e *Env) Prompt(ctx context.Context, prompt string, extra ...string) (*Result, error) {
	return e.Run(ctx, runArgs("", prompt, extra)...)
}

// Resume runs `opencode run --format json --session id prompt`.
func (e *Env) Resume(ctx context.Context, sessionID, prompt string, extra ...string) (*Result, error) {
	res, err := e.Run(ctx, runArgs(sessionID, prompt, extra)...)
	if res != nil && res.SessionID == "" {
		res.SessionID = sessionID
	}
	return res, err
}

// Export runs `opencode export id` and returns the JSON document it prints.
func (e *Env) Export(ctx context.Context, sessionID string) (json.RawMessage, *Result, error) {
	res, err := e.Run(ctx, "export", sessionID)
	if err != nil {
		return nil, res, err
	}
	if res.ExitCode != 0 {
		return nil, res, res.Err()
	}
	// Some versions print a status line before the document.
	i := strings.Index(res.Stdout, "{")
	if i < 0 {
		return nil, res, fmt.Errorf("export printed no JSON\n%s", res)
	}
	doc := json.RawMessage(res.Stdout[i:])
	if !json.Valid(doc) {
		return nil, res, fmt.Errorf("export printed invalid JSON\n%s", res)
	}
	return doc, res, nil
}

// Proc is an OpenCode process started in the background.
type Proc struct {
	Cmd    *exec.Cmd
	Args   []string
	stdout *lockedBuffer
	stderr *lockedBuffer
	start  time.Time
	done   chan struct{}
	res    *Result
	err    error
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Start starts opencode with args in the background. The process is killed
// when the Env's timeout passes; Kill kills it earlier.
func (e *Env) Start(args ...string) (*Proc, error) {
	ctx, cancel := context.WithTimeout(context.Background(), e.Timeout)
	p, err := e.start(ctx, args)
	if err != nil {
		cancel()
		return nil, err
	}
	go func() {
		<-p.done
		cancel()
	}()
	return p, nil
}

// start starts opencode with args, killed when ctx ends. A goroutine waits
// for it and fills in the Result (a non-zero exit is not an error).
func (e *Env) start(ctx context.Context, args []string) (*Proc, error) {
	cmd := e.Command(ctx, args...)
	p := &Proc{Cmd: cmd, Args: args, stdout: &lockedBuffer{}, stderr: &lockedBuffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.stdout, p.stderr
	p.start = time.Now()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		err := cmd.Wait()
		res := &Result{Args: args, Stdout: p.stdout.String(), Stderr: p.stderr.String(), Duration: time.Since(p.start)}
		res.SessionID = parseSessionID(res.Stdout)
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			res.ExitCode = ee.ExitCode()
			err = nil
		}
		p.res, p.err = res, err
		close(p.done)
	}()
	return p, nil
}

// StartPrompt starts `opencode run --format json [--session id] prompt` in
// the background (session may be empty for a new session).
func (e *Env) StartPrompt(session, prompt string, extra ...string) (*Proc, error) {
	return e.Start(runArgs(session, prompt, extra)...)
}

// Stdout is what the process has printed so far.
func (p *Proc) Stdout() string { return p.stdout.String() }

// Stderr is what the process has printed to stderr so far.
func (p *Proc) Stderr() string { return p.stderr.String() }

// Kill sends SIGKILL to the process and its process group, then waits for it.
func (p *Proc) Kill() (*Result, error) {
	killGroup(p.Cmd)
	return p.Wait()
}

// Hold is a mock's stream held at a stage: *mockanthropic.Pause and
// *mockopenai.Pause.
type Hold interface {
	// Held is closed once the stream is held.
	Held() <-chan struct{}
}

// KillAt SIGKILLs OpenCode at a chosen point of a turn, the way a crash
// leaves a session: it waits until the mock holds the stream at pause, then
// until stored (polled) reports that OpenCode has written what the caller
// is after, and kills the process group. It fails, killing the process,
// when OpenCode exits first, when ctx ends, or when the kill does not end
// the process. Wait returns the killed process's Result.
func (p *Proc) KillAt(ctx context.Context, pause Hold, stored func() bool) error {
	select {
	case <-pause.Held():
	case <-p.Done():
		res, _ := p.Wait()
		return fmt.Errorf("opencode exited before the mock's stream reached the pause\n%s", res)
	case <-ctx.Done():
		p.Kill()
		return fmt.Errorf("the mock's stream never reached the pause: %w", ctx.Err())
	}
	if err := waitFor(ctx, stored); err != nil {
		p.Kill()
		return fmt.Errorf("the stream is held, but OpenCode never stored what the kill waits for: %w", err)
	}
	res, err := p.Kill()
	if err != nil {
		return err
	}
	if res.ExitCode != -1 {
		return fmt.Errorf("opencode was not killed (exit %d)\n%s", res.ExitCode, res)
	}
	return nil
}

// waitFor polls cond until it returns true or ctx ends.
func waitFor(ctx context.Context, cond func() bool) error {
	for !cond() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return nil
}

// Wait waits for the process to exit.
func (p *Proc) Wait() (*Result, error) {
	<-p.done
	return p.res, p.err
}

// Done is closed when the process has exited.
func (p *Proc) Done() <-chan struct{} { return p.done }

// Server is a running `opencode serve`.
type Server struct {
	*Proc
	URL string
}

var listenRe = regexp.MustCompile(`https?://[0-9.:\[\]a-z]+:[0-9]+`)

// Serve starts `opencode serve` on a loopback port and waits until it
// answers. Stop it with Kill.
func (e *Env) Serve(ctx context.Context) (*Server, error) {
	p, err := e.Start("serve", "--hostname", "127.0.0.1", "--port", "0")
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	for {
		if m := listenRe.FindString(p.Stdout() + p.Stderr()); m != "" {
			s := &Server{Proc: p, URL: m}
			return s, nil
		}
		select {
		case <-p.Done():
			res, _ := p.Wait()
			return nil, fmt.Errorf("opencode serve exited early\n%s", res)
		case <-ctx.Done():
			p.Kill()
			return nil, fmt.Errorf("opencode serve did not report its address: %w\nstdout:%s\nstderr:%s", ctx.Err(), p.Stdout(), p.Stderr())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Get performs GET path on the server and returns status and body.
func (s *Server) Get(ctx context.Context, path string) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+path, nil)
	if err != nil {
		return 0, nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// Post performs POST path on the server with a JSON body and returns
// status and body.
func (s *Server) Post(ctx context.Context, path, body string) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.URL+path, strings.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// SessionMessages fetches GET /session/:id/message, what the TUI loads.
func (s *Server) SessionMessages(ctx context.Context, sessionID string) (int, []byte, error) {
	return s.Get(ctx, "/session/"+sessionID+"/message")
}

// setModelField sets key of the model full ("provider/model") to v in a
// provider's models map, when full names that provider.
func setModelField(models map[string]any, providerID, full, key string, v any) {
	provider, model, _ := strings.Cut(full, "/")
	if provider != providerID {
		return
	}
	m, _ := models[model].(map[string]any)
	if m == nil {
		m = map[string]any{}
	}
	m[key] = v
	models[model] = m
}
