package storegen

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sessfix/sessfix/pkg/store"
)

// Version changes whenever the generator writes different bytes for the
// same Config, so caches of generated stores can tell they are stale.
const Version = 2

// Config says what to generate. The zero value of a field means its
// default (see Default).
type Config struct {
	// Sessions in the store.
	Sessions int
	// Messages per session. Turns are a user message and three assistant
	// steps, so a multiple of 4 gives whole turns.
	Messages int
	// Parts per assistant message, at least 4: step-start, reasoning, one
	// or more tool calls (or the final text), step-finish. User messages
	// have one text part.
	Parts int
	// ToolOutput is the mean size in bytes of a completed tool's output
	// (sizes vary uniformly between half and one and a half of it).
	ToolOutput int
	// DefectRate is the share of assistant messages that get one defect.
	// Negative means none; zero means the default.
	DefectRate float64
	// Seed makes different stores of the same size.
	Seed uint64
	// Start is the creation time of the first session; zero means
	// 2026-01-01 UTC. Each session starts one hour after the previous one.
	Start time.Time
	// Images is how many images each session holds, every one within
	// Anthropic's limits (PNGs of ImageWidth×ImageHeight px, ImageBytes
	// of base64 each): the user pastes every other one (a file part with
	// a data: URL) and the read tool returns the others (an image
	// attachment of a completed tool part), spread over the session's
	// turns. Zero means none: the stores of earlier generator versions.
	Images int `json:",omitempty"`
	// ImageBytes is the size of each image's base64 (default 512 KiB when
	// Images is set).
	ImageBytes int `json:",omitempty"`
}

// Image sides of the generated images: within the 2000 px a request of
// more than 20 images allows.
const (
	ImageWidth  = 1600
	ImageHeight = 1200
)

// Default is the configuration of the benchmark store: 125 sessions of 200
// messages, 5 parts per assistant message, which makes 100,000 parts.
var Default = Config{
	Sessions:   125,
	Messages:   200,
	Parts:      5,
	ToolOutput: 3000,
	DefectRate: 0.002,
	Seed:       1,
}

func (c Config) withDefaults() Config {
	if c.Sessions == 0 {
		c.Sessions = Default.Sessions
	}
	if c.Messages == 0 {
		c.Messages = Default.Messages
	}
	if c.Parts == 0 {
		c.Parts = Default.Parts
	}
	if c.ToolOutput == 0 {
		c.ToolOutput = Default.ToolOutput
	}
	if c.DefectRate == 0 {
		c.DefectRate = Default.DefectRate
	}
	if c.DefectRate < 0 {
		c.DefectRate = 0
	}
	if c.Start.IsZero() {
		c.Start = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	if c.Images > 0 && c.ImageBytes == 0 {
		c.ImageBytes = 512 << 10
	}
	return c
}

func (c Config) validate() error {
	switch {
	case c.Sessions < 0, c.Messages < 0:
		return errors.New("sessions and messages cannot be negative")
	case c.Parts < 4:
		return fmt.Errorf("parts per assistant message must be at least 4 (step-start, reasoning, content, step-finish), not %d", c.Parts)
	case c.ToolOutput < 2:
		return fmt.Errorf("tool output size must be at least 2 bytes, not %d", c.ToolOutput)
	case c.DefectRate > 1:
		return fmt.Errorf("defect rate must be between 0 and 1, not %g", c.DefectRate)
	case c.Images < 0 || c.Images > 100:
		return fmt.Errorf("images per session must be between 0 and 100 (the API's count limit), not %d", c.Images)
	case c.Images > 0 && c.ImageBytes < 128:
		return fmt.Errorf("image size must be at least 128 bytes of base64, not %d", c.ImageBytes)
	}
	return nil
}

// Defect kinds injected into assistant messages, with the rule that reports
// each.
const (
	// SF104: a text part whose text is a newline, which every OpenCode
	// version sends as it is ("" next to signed reasoning would be a defect
	// only where OpenCode sends it as " ": 1.2 and later, not 1.1's JSON
	// stores).
	DefectEmptyText       = "empty-text"
	DefectThinkingLate    = "thinking-late"    // SF103: reasoning after a tool or text part
	DefectUnsigned        = "unsigned"         // SF107: reasoning without a signature
	DefectRunningTool     = "running-tool"     // SF105: a tool left running in a finished message
	DefectTruncatedRecord = "truncated-record" // SF201: a part record cut in half
)

var defectKinds = []string{DefectEmptyText, DefectThinkingLate, DefectUnsigned, DefectRunningTool, DefectTruncatedRecord}

// Stats describes a generated store.
type Stats struct {
	Sessions, Messages, Parts int
	// Defects counts the injected defects by kind.
	Defects map[string]int
	// Bytes is the size of every record body as written (files, or data
	// columns), which is what a scan must read at least.
	Bytes int64
	// MaxSessionBytes is the size of the largest session's records.
	MaxSessionBytes int64
	// Images counts the images, pasted and returned by tools.
	Images int
}

// Generate writes a new store of the shape under dir and returns the path
// to scan (laid out as pkg/store/storetest.Materialize does):
//
//	sqlite    dir/opencode.db
//	storage   dir/storage
//	project   dir/project/global/storage
//	sessions  dir/sessions
//	export    dir/<sessionID>.json (Sessions must be 1)
//
// The store's path must not exist yet.
func Generate(shape store.Shape, dir string, cfg Config) (string, Stats, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return "", Stats{}, err
	}
	w, path, err := newWriter(shape, dir, cfg)
	if err != nil {
		return "", Stats{}, err
	}
	st := Stats{Defects: map[string]int{}}
	err = each(cfg, w, func(s *Session, n int64) {
		st.Sessions++
		st.Messages += len(s.Messages)
		for _, m := range s.Messages {
			st.Parts += len(m.Parts)
		}
		for _, d := range s.Defects {
			st.Defects[d]++
		}
		st.Images += s.Images
		st.Bytes += n
		st.MaxSessionBytes = max(st.MaxSessionBytes, n)
	})
	if cerr := w.close(); err == nil && cerr != nil {
		err = fmt.Errorf("finish %s: %w", path, cerr)
	}
	if err != nil {
		return "", Stats{}, err
	}
	return path, st, nil
}

// each generates the sessions on every core and writes them: concurrently
// when the writer allows it, else in order. done sees the sessions in
// order. At most two sessions per core are in memory at once.
func each(cfg Config, w writer, done func(s *Session, n int64)) error {
	workers := runtime.GOMAXPROCS(0)
	type result struct {
		s   *Session
		n   int64
		err error
	}
	slots := make([]chan result, cfg.Sessions)
	for i := range slots {
		slots[i] = make(chan result, 1)
	}
	sem := make(chan struct{}, 2*workers)
	var next atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for k := 0; k < workers; k++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case sem <- struct{}{}:
				case <-stop:
					return
				}
				i := int(next.Add(1) - 1)
				if i >= cfg.Sessions {
					<-sem
					return
				}
				r := result{s: cfg.Session(i)}
				if w.concurrent() {
					r.n, r.err = w.write(r.s)
				}
				slots[i] <- r
			}
		}()
	}
	defer func() { close(stop); wg.Wait() }()
	for i := range slots {
		r := <-slots[i]
		if !w.concurrent() {
			r.n, r.err = w.write(r.s)
		}
		<-sem
		if r.err != nil {
			return fmt.Errorf("write session %s: %w", r.s.ID, r.err)
		}
		done(r.s, r.n)
	}
	return nil
}

// Session is one generated session. Bodies are compact JSON objects without
// the ids (as in SQLite's data columns); writers of the JSON shapes add them.
type Session struct {
	ID      string
	Title   string
	Created int64 // epoch ms
	Updated int64
	// Messages in OpenCode's order (by creation time, then id).
	Messages []Message
	// Defects lists the defect kinds injected, one per affected message.
	Defects []string
	// Images counts the session's images (Config.Images).
	Images int
}

// Message is one generated message.
type Message struct {
	ID      string
	Created int64
	Body    []byte
	Parts   []Part
}

// Part is one generated part. Truncated parts have a body that is not
// valid JSON; writers cut them after formatting.
type Part struct {
	ID        string
	Created   int64
	Body      []byte
	Truncated bool
}

// Session generates session i of the store. It depends only on the config
// and i.
func (c Config) Session(i int) *Session {
	c = c.withDefaults()
	g := &gen{cfg: c, rng: rand.New(rand.NewPCG(c.Seed, uint64(i)+1))}
	g.ms = c.Start.UnixMilli() + int64(i)*int64(time.Hour/time.Millisecond)
	s := &Session{Created: g.ms}
	s.ID = g.sessionID()
	s.Title = g.sentence(3, 8)
	pasted, returned := c.imagesByTurn()
	var userID string
	for j := 0; j < c.Messages; j++ {
		g.tick(200, 3000)
		if j%4 == 0 {
			m := g.userMessage(s, pasted[j/4])
			userID = m.ID
			s.Messages = append(s.Messages, m)
			s.Images += pasted[j/4]
			continue
		}
		final := j%4 == 3 || j == c.Messages-1
		tools := 0
		if j%4 == 1 && !final {
			tools = returned[j/4]
			s.Images += tools
		}
		m, defect := g.assistantMessage(s.ID, userID, final, tools)
		s.Messages = append(s.Messages, m)
		if defect != "" {
			s.Defects = append(s.Defects, defect)
		}
	}
	s.Updated = g.ms
	return s
}

// gen holds the state of one session's generation.
type gen struct {
	cfg     Config
	rng     *rand.Rand
	ms      int64 // the session's clock, epoch ms
	lastMS  int64
	counter int64
}

// tick advances the clock by lo..hi milliseconds.
func (g *gen) tick(lo, hi int) { g.ms += int64(lo + g.rng.IntN(hi-lo+1)) }

const hexDigits = "0123456789abcdef"
const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// id mints an id in OpenCode's format at the current clock: 12 hex digits
// of the low 48 bits of ms*4096+counter (inverted for sessions), then 14
// base62 characters.
func (g *gen) id(prefix string, invert bool) string {
	if g.ms != g.lastMS {
		g.lastMS, g.counter = g.ms, 0
	}
	g.counter++
	v := uint64(g.ms*4096 + g.counter)
	if invert {
		v = ^v
	}
	v &= 1<<48 - 1
	b := make([]byte, 0, len(prefix)+1+26)
	b = append(b, prefix...)
	b = append(b, '_')
	for shift := 44; shift >= 0; shift -= 4 {
		b = append(b, hexDigits[(v>>uint(shift))&0xf])
	}
	for k := 0; k < 14; k++ {
		b = append(b, base62[g.rng.IntN(len(base62))])
	}
	return string(b)
}

func (g *gen) sessionID() string { return g.id("ses", true) }

// Bodies, with keys in the order OpenCode writes them.

type timeCreated struct {
	Created   int64 `json:"created"`
	Completed int64 `json:"completed,omitempty"`
}

type modelRef struct {
	ProviderID string `json:"providerID"`
	ModelID    string `json:"modelID"`
}

type userBody struct {
	Role    string      `json:"role"`
	Time    timeCreated `json:"time"`
	Summary struct {
		Diffs []string `json:"diffs"`
	} `json:"summary"`
	Agent string   `json:"agent"`
	Model modelRef `json:"model"`
}

type tokens struct {
	Total     int `json:"total"`
	Input     int `json:"input"`
	Output    int `json:"output"`
	Reasoning int `json:"reasoning"`
	Cache     struct {
		Read  int `json:"read"`
		Write int `json:"write"`
	} `json:"cache"`
}

type assistantBody struct {
	Role       string      `json:"role"`
	Time       timeCreated `json:"time"`
	ParentID   string      `json:"parentID"`
	ModelID    string      `json:"modelID"`
	ProviderID string      `json:"providerID"`
	Mode       string      `json:"mode"`
	Agent      string      `json:"agent"`
	Path       struct {
		Cwd  string `json:"cwd"`
		Root string `json:"root"`
	} `json:"path"`
	Cost   float64 `json:"cost"`
	Tokens tokens  `json:"tokens"`
	Finish string  `json:"finish"`
}

type span struct {
	Start int64 `json:"start"`
	End   int64 `json:"end,omitempty"`
}

type stepStartBody struct {
	Type     string `json:"type"`
	Snapshot string `json:"snapshot"`
}

type stepFinishBody struct {
	Type     string  `json:"type"`
	Reason   string  `json:"reason"`
	Snapshot string  `json:"snapshot"`
	Cost     float64 `json:"cost"`
	Tokens   tokens  `json:"tokens"`
}

type signature struct {
	Anthropic struct {
		Signature string `json:"signature"`
	} `json:"anthropic"`
}

type reasoningBody struct {
	Type     string     `json:"type"`
	Text     string     `json:"text"`
	Metadata *signature `json:"metadata,omitempty"`
	Time     span       `json:"time"`
}

type textBody struct {
	Type string `json:"type"`
	Text string `json:"text"`
	Time span   `json:"time"`
}

type toolState struct {
	Status      string          `json:"status"`
	Input       json.RawMessage `json:"input"`
	Output      string          `json:"output,omitempty"`
	Title       string          `json:"title,omitempty"`
	Metadata    json.RawMessage `json:"metadata,omitempty"`
	Time        span            `json:"time"`
	Attachments []attachment    `json:"attachments,omitempty"`
}

// attachment is a file a tool returned, as the read tool stores an image.
type attachment struct {
	ID        string `json:"id"`
	MessageID string `json:"messageID"`
	SessionID string `json:"sessionID"`
	Type      string `json:"type"`
	Mime      string `json:"mime"`
	URL       string `json:"url"`
}

// fileBody is a file part: an image the user pasted.
type fileBody struct {
	Type     string `json:"type"`
	Mime     string `json:"mime"`
	Filename string `json:"filename"`
	URL      string `json:"url"`
}

type toolBody struct {
	Type   string    `json:"type"`
	CallID string    `json:"callID"`
	Tool   string    `json:"tool"`
	State  toolState `json:"state"`
}

const (
	providerID = "anthropic"
	modelID    = "claude-sonnet-4-5"
	projectDir = "/home/dev/project"
)

func marshal(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("storegen: marshal %T: %v", v, err)) // only plain structs are marshalled
	}
	return b
}

func (g *gen) userMessage(s *Session, images int) Message {
	m := Message{ID: g.id("msg", false), Created: g.ms}
	b := userBody{Role: "user", Time: timeCreated{Created: g.ms}, Agent: "build", Model: modelRef{providerID, modelID}}
	b.Summary.Diffs = []string{}
	m.Body = marshal(b)
	g.tick(1, 5)
	m.Parts = []Part{g.textPart(g.sentence(8, 60))}
	for k := range images {
		m.Parts = append(m.Parts, Part{ID: g.id("prt", false), Created: g.ms, Body: marshal(fileBody{
			Type: "file", Mime: "image/png", Filename: fmt.Sprintf("screenshot-%d.png", k+1), URL: "data:image/png;base64," + g.png(),
		})})
	}
	return m
}

// imagesByTurn spreads the session's images over its turns, one turn
// after the other: the even ones pasted into the turn's user message, the
// odd ones returned by a read in its first assistant step (when the turn
// has a step that is not its last).
func (c Config) imagesByTurn() (pasted, returned []int) {
	turns := (c.Messages + 3) / 4
	pasted, returned = make([]int, turns), make([]int, turns)
	var slots []int // turns with a step that can call the read tool
	for t := range turns {
		if 4*t+2 < c.Messages {
			slots = append(slots, t)
		}
	}
	for k := range c.Images {
		if turns == 0 {
			break
		}
		if k%2 == 0 || len(slots) == 0 {
			pasted[k/2%turns]++
		} else {
			returned[slots[k/2%len(slots)]]++
		}
	}
	return pasted, returned
}

func (g *gen) tokens() tokens {
	t := tokens{Input: 8000 + g.rng.IntN(40000), Output: 20 + g.rng.IntN(800)}
	t.Cache.Read = g.rng.IntN(t.Input)
	t.Total = t.Input + t.Output
	return t
}

// assistantMessage makes one assistant step: step-start, signed reasoning,
// Parts-3 content parts (tool calls, or the final text and tool calls
// before it), step-finish. It may inject one defect.
func (g *gen) assistantMessage(sessionID, parentID string, final bool, images int) (Message, string) {
	m := Message{ID: g.id("msg", false), Created: g.ms}
	created := g.ms
	nContent := g.cfg.Parts - 3

	defect := ""
	if g.cfg.DefectRate > 0 && g.rng.Float64() < g.cfg.DefectRate {
		defect = defectKinds[g.rng.IntN(len(defectKinds))]
	}

	// The blocks of the step in the order the model streamed them.
	const (
		reasoning = iota
		text
		emptyText
		tool
		runningTool
	)
	blocks := []int{reasoning}
	for k := 0; k < nContent; k++ {
		if final && k == nContent-1 {
			blocks = append(blocks, text)
		} else {
			blocks = append(blocks, tool)
		}
	}
	switch defect {
	case DefectRunningTool:
		blocks[1] = runningTool
	case DefectEmptyText:
		blocks[1] = emptyText
	case DefectThinkingLate:
		blocks[0], blocks[1] = blocks[1], blocks[0]
	}

	parts := make([]Part, 0, g.cfg.Parts)
	add := func(body []byte) {
		parts = append(parts, Part{ID: g.id("prt", false), Created: g.ms, Body: body})
	}
	g.tick(1, 40)
	add(marshal(stepStartBody{Type: "step-start", Snapshot: g.hex(40)}))
	for _, b := range blocks {
		g.tick(20, 2000)
		switch b {
		case reasoning:
			add(g.reasoningBody(defect != DefectUnsigned))
		case text:
			add(g.textBody(g.sentence(20, 300)))
		case emptyText:
			add(g.textBody("\n"))
		case tool, runningTool:
			add(g.toolBody(b == runningTool))
		}
	}
	for range images {
		g.tick(20, 2000)
		add(g.imageToolBody(sessionID, m.ID))
	}
	if defect == DefectTruncatedRecord {
		parts[len(parts)-1].Truncated = true
	}
	finish := "tool-calls"
	if final {
		finish = "stop"
	}
	t := g.tokens()
	cost := float64(t.Input)*3e-6 + float64(t.Output)*15e-6
	g.tick(1, 40)
	add(marshal(stepFinishBody{Type: "step-finish", Reason: finish, Snapshot: g.hex(40), Cost: cost, Tokens: t}))

	b := assistantBody{Role: "assistant", Time: timeCreated{Created: created, Completed: g.ms},
		ParentID: parentID, ModelID: modelID, ProviderID: providerID, Mode: "build", Agent: "build",
		Cost: cost, Tokens: t, Finish: finish}
	b.Path.Cwd, b.Path.Root = projectDir, projectDir
	m.Body = marshal(b)
	m.Parts = parts
	return m, defect
}

func (g *gen) textPart(text string) Part {
	return Part{ID: g.id("prt", false), Created: g.ms, Body: g.textBody(text)}
}

func (g *gen) textBody(text string) []byte {
	start := g.ms
	return marshal(textBody{Type: "text", Text: text, Time: span{Start: start, End: start + int64(g.rng.IntN(2000))}})
}

func (g *gen) reasoningBody(signed bool) []byte {
	b := reasoningBody{Type: "reasoning", Text: g.sentence(30, 250), Time: span{Start: g.ms, End: g.ms + int64(g.rng.IntN(3000))}}
	if signed {
		b.Metadata = &signature{}
		b.Metadata.Anthropic.Signature = g.base64(300 + g.rng.IntN(500))
	}
	return marshal(b)
}

// toolBody makes a completed tool call (bash, read or grep) with an output
// of about ToolOutput bytes, or a running one.
func (g *gen) toolBody(running bool) []byte {
	b := toolBody{Type: "tool", CallID: "toolu_" + g.alnum(24)}
	start := g.ms
	out := g.output(g.cfg.ToolOutput/2 + g.rng.IntN(g.cfg.ToolOutput+1))
	switch g.rng.IntN(3) {
	case 0:
		cmd := "go test ./pkg/" + g.word() + "/..."
		desc := "Run the " + g.word() + " tests"
		b.Tool = "bash"
		b.State = toolState{Input: marshal(map[string]string{"command": cmd, "description": desc}), Output: out, Title: desc,
			Metadata: marshal(struct {
				Output      string `json:"output"`
				Exit        int    `json:"exit"`
				Description string `json:"description"`
				Truncated   bool   `json:"truncated"`
			}{out, 0, desc, false})}
	case 1:
		file := projectDir + "/pkg/" + g.word() + "/" + g.word() + ".go"
		b.Tool = "read"
		b.State = toolState{Input: marshal(map[string]string{"filePath": file}), Output: out, Title: file[len(projectDir)+1:],
			Metadata: marshal(map[string]any{"preview": out[:min(len(out), 200)], "truncated": false})}
	default:
		pat := "func " + g.word()
		b.Tool = "grep"
		b.State = toolState{Input: marshal(map[string]string{"pattern": pat, "path": projectDir}), Output: out, Title: pat,
			Metadata: marshal(map[string]any{"matches": 1 + g.rng.IntN(40), "truncated": false})}
	}
	b.State.Status = "completed"
	b.State.Time = span{Start: start, End: start + 1 + int64(g.rng.IntN(5000))}
	if running {
		b.State.Status = "running"
		b.State.Output, b.State.Metadata = "", nil
		b.State.Time.End = 0
	}
	return marshal(b)
}

// imageToolBody makes a completed read of an image, its PNG kept whole in
// the tool part's attachments, as OpenCode 1.1.65 stores it.
func (g *gen) imageToolBody(sessionID, messageID string) []byte {
	file := projectDir + "/docs/" + g.word() + ".png"
	start := g.ms
	b := toolBody{Type: "tool", CallID: "toolu_" + g.alnum(24), Tool: "read"}
	b.State = toolState{Status: "completed", Input: marshal(map[string]string{"filePath": file}), Output: "Image read successfully",
		Title: file[len(projectDir)+1:], Metadata: marshal(map[string]any{"preview": "Image read successfully", "truncated": false}),
		Time: span{Start: start, End: start + 1 + int64(g.rng.IntN(500))},
		Attachments: []attachment{{ID: g.id("prt", false), MessageID: messageID, SessionID: sessionID, Type: "file",
			Mime: "image/png", URL: "data:image/png;base64," + g.png()}}}
	return marshal(b)
}

// png returns a PNG of ImageWidth×ImageHeight px as about ImageBytes of
// base64: signature, IHDR, one IDAT chunk of random bytes, IEND, each
// chunk with its CRC. Its header reads as a PNG of that size; its pixels
// do not decode, and nothing within the limits should decode them.
func (g *gen) png() string {
	raw := g.cfg.ImageBytes / 4 * 3
	data := make([]byte, max(0, raw-57)) // 8 + 25 (IHDR) + 12 (IDAT) + 12 (IEND)
	for k := 0; k < len(data); k += 8 {
		v := g.rng.Uint64()
		for i := k; i < min(k+8, len(data)); i++ {
			data[i] = byte(v)
			v >>= 8
		}
	}
	var ihdr [13]byte
	binary.BigEndian.PutUint32(ihdr[0:], ImageWidth)
	binary.BigEndian.PutUint32(ihdr[4:], ImageHeight)
	ihdr[8], ihdr[9] = 8, 6 // 8-bit RGBA
	out := []byte("\x89PNG\r\n\x1a\n")
	out = pngChunk(out, "IHDR", ihdr[:])
	out = pngChunk(out, "IDAT", data)
	out = pngChunk(out, "IEND", nil)
	return base64.StdEncoding.EncodeToString(out)
}

func pngChunk(out []byte, typ string, data []byte) []byte {
	out = binary.BigEndian.AppendUint32(out, uint32(len(data)))
	start := len(out)
	out = append(out, typ...)
	out = append(out, data...)
	return binary.BigEndian.AppendUint32(out, crc32.ChecksumIEEE(out[start:]))
}

var words = []string{
	"the", "store", "session", "message", "part", "read", "write", "check", "order", "file", "test", "build",
	"error", "value", "return", "context", "handler", "request", "response", "config", "option", "server",
	"client", "cache", "index", "parse", "format", "output", "input", "signal", "thread", "worker", "queue",
	"and", "with", "from", "into", "then", "when", "each", "every", "first", "last", "next", "before", "after",
	"should", "could", "would", "because", "since", "while", "loop", "call", "tool", "result", "reason", "step",
	"function", "package", "module", "import", "struct",
}

func (g *gen) word() string { return words[g.rng.IntN(len(words))] }

// sentence returns lo..hi words of prose ending in a period.
func (g *gen) sentence(lo, hi int) string {
	n := lo + g.rng.IntN(hi-lo+1)
	b := make([]byte, 0, n*7)
	for k := 0; k < n; k++ {
		if k > 0 {
			if k%14 == 0 {
				b = append(b, ". "...)
			} else {
				b = append(b, ' ')
			}
		}
		b = append(b, g.word()...)
	}
	return string(append(b, '.'))
}

// output returns about n bytes of tool output: source lines and test log
// lines, newline-terminated.
func (g *gen) output(n int) string {
	b := make([]byte, 0, n+100)
	line := 1
	for len(b) < n {
		switch g.rng.IntN(3) {
		case 0:
			b = fmt.Appendf(b, "%5d\tfunc (s *%s) %s(ctx context.Context, %s string) error {\n", line, g.word(), g.word(), g.word())
		case 1:
			b = fmt.Appendf(b, "%5d\t\tif err := %s.%s(%q); err != nil {\n", line, g.word(), g.word(), g.word())
		default:
			b = fmt.Appendf(b, "ok  \tgithub.com/example/project/pkg/%s\t0.%03ds\n", g.word(), g.rng.IntN(1000))
		}
		line++
	}
	return string(b)
}

func (g *gen) hex(n int) string {
	b := make([]byte, n)
	for k := range b {
		b[k] = hexDigits[g.rng.IntN(16)]
	}
	return string(b)
}

func (g *gen) alnum(n int) string {
	b := make([]byte, n)
	for k := range b {
		b[k] = base62[g.rng.IntN(len(base62))]
	}
	return string(b)
}

const base64Chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

func (g *gen) base64(n int) string {
	n -= n % 4
	b := make([]byte, n)
	for k := range b {
		b[k] = base64Chars[g.rng.IntN(64)]
	}
	if n >= 4 {
		b[n-1] = '='
	}
	return string(b)
}
