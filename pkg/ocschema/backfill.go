package ocschema

import (
	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
)

// Context is what a default is derived from: the record's place in its
// session. Fields a caller cannot supply stay zero, and the defaults that
// need them are then not applied.
type Context struct {
	// Created is the record's creation time in epoch milliseconds: the
	// SQLite row's time_created (for a part, the part row's), or the time
	// in its id.
	Created int64
	// Completed is the time.completed of the assistant message the record
	// is (or belongs to); 0 when it has none.
	Completed int64
	// Message is the body of the message a part belongs to.
	Message []byte
	// PreviousUser is the id of the closest user message before an
	// assistant message: its parentID.
	PreviousUser string
	// Parent is the body of an assistant message's user message; its
	// model names the assistant's providerID and modelID.
	Parent []byte
	// Reply is the body of the assistant message that answered a user
	// message (the first one after it whose parentID names it, else the
	// next assistant message): its providerID, modelID and agent are what
	// the user message asked for.
	Reply []byte
	// Session is what the session row says.
	Session SessionInfo
}

// SessionInfo is what a session row holds that defaults use.
type SessionInfo struct {
	// Directory is the session's directory and Worktree its project's
	// worktree: an assistant message's path.cwd and path.root.
	Directory string
	Worktree  string
	// ProviderID and ModelID are the session's model (the SQLite session
	// row's model column of 1.18, {"id", "providerID", …}), when the store
	// keeps one: the model of last resort.
	ProviderID string
	ModelID    string
}

// Default is the value OpenCode itself writes for a key, used to fill it in
// when a record lacks it. Each one is shown on real OpenCode to make a
// session that lacks the key load again (internal/opencodetest,
// TestBackfill).
type Default struct {
	// Object and Key name the key: Key of schema object Object.
	Object string
	Key    string
	// Where says which records have the key and where ("user message:
	// agent", "tool part, completed: state.time").
	Where string
	// Value is the value, in words.
	Value string
	// Why says where the value comes from in OpenCode.
	Why  string
	fill func(c Context, rec gjson.Result) (any, bool)
}

// Fill computes the default for a record, or reports that its context
// lacks what the default is derived from.
func (d *Default) Fill(c Context, record []byte) (any, bool) {
	return d.fill(c, gjson.ParseBytes(record))
}

// Defaults lists every key with a safe default, in schema order.
func Defaults() []Default { return defaults }

// DefaultFor returns the default of key Key of object type Object, or nil.
func DefaultFor(object, key string) *Default {
	for i := range defaults {
		if defaults[i].Object == object && defaults[i].Key == key {
			return &defaults[i]
		}
	}
	return nil
}

// NoDefault lists the required keys of every record variant that have no
// safe default (ids, roles and types, and everything that carries
// conversation content), with their path.
func NoDefault() []FlatField {
	var out []FlatField
	seen := map[string]bool{}
	var walkUnion func(u *UnionType, prefix string)
	walkUnion = func(u *UnionType, prefix string) {
		for _, v := range u.Variants {
			for _, f := range Flatten(v.Object) {
				key := f.Parent + "." + f.Name
				if seen[key] {
					continue
				}
				if f.Type == Union && f.Required {
					walkUnion(unions[f.Ref], prefix+f.Path+".")
				}
				if !f.Required || DefaultFor(f.Parent, f.Name) != nil {
					continue
				}
				seen[key] = true
				f.Path = prefix + f.Path
				out = append(out, f)
			}
		}
	}
	walkUnion(unions[MessageUnion], "")
	walkUnion(unions[PartUnion], "")
	return out
}

// Backfill fills every key of a record that is missing (or null) and has a
// default, and returns the new body, the problems it filled and the
// problems left. ids are used for the check only: they are never written
// into the body. The body is returned unchanged when nothing was filled.
func Backfill(r Record, data []byte, ids IDs, c Context) (out []byte, filled, left []Problem) {
	out = data
	for _, p := range Check(r, data, ids) {
		if !fillable(p) {
			continue
		}
		d := DefaultFor(p.Object, lastKey(p.Path))
		if d == nil {
			continue
		}
		v, ok := d.fill(c, gjson.ParseBytes(out))
		if !ok {
			continue
		}
		next, err := sjson.SetBytes(out, p.Path, v)
		if err != nil {
			continue
		}
		out = next
		filled = append(filled, p)
	}
	if len(filled) == 0 {
		return data, nil, Check(r, data, ids)
	}
	return out, filled, Check(r, out, ids)
}

func fillable(p Problem) bool {
	return p.Kind == Missing || p.Kind == WrongType && p.Got == "null"
}

// lastKey is the last component of a gjson path.
func lastKey(path string) string {
	for i := len(path) - 1; i >= 0; i-- {
		if path[i] == '.' && (i == 0 || path[i-1] != '\\') {
			return path[i+1:]
		}
	}
	return path
}

// Fill functions.

func constant(v any) func(Context, gjson.Result) (any, bool) {
	return func(Context, gjson.Result) (any, bool) { return v, true }
}

func created(c Context, _ gjson.Result) (any, bool) { return c.Created, c.Created > 0 }

func ended(c Context) int64 {
	if c.Completed >= c.Created {
		return c.Completed
	}
	return c.Created
}

func createdObject(key string) func(Context, gjson.Result) (any, bool) {
	return func(c Context, _ gjson.Result) (any, bool) {
		return map[string]int64{key: c.Created}, c.Created > 0
	}
}

func span(c Context, _ gjson.Result) (any, bool) {
	return map[string]int64{"start": c.Created, "end": ended(c)}, c.Created > 0
}

func end(c Context, _ gjson.Result) (any, bool) { return ended(c), c.Created > 0 }

// firstString returns the first of the values that is a string.
func firstString(vals ...gjson.Result) (string, bool) {
	for _, v := range vals {
		if v.Type == gjson.String && v.Str != "" {
			return v.Str, true
		}
	}
	return "", false
}

// DefaultAgent is the agent OpenCode runs a prompt with unless told
// otherwise (its built-in primary agent).
const DefaultAgent = "build"

func agentOr(keys ...string) func(Context, gjson.Result) (any, bool) {
	return func(c Context, rec gjson.Result) (any, bool) {
		var vals []gjson.Result
		for _, k := range keys {
			vals = append(vals, rec.Get(k))
		}
		reply := gjson.ParseBytes(c.Reply)
		vals = append(vals, reply.Get("agent"), reply.Get("mode"))
		if s, ok := firstString(vals...); ok {
			return s, true
		}
		return DefaultAgent, true
	}
}

// model returns the provider and model of the first source that names
// both.
func model(pairs ...[2]gjson.Result) (string, string, bool) {
	for _, p := range pairs {
		provider, ok1 := firstString(p[0])
		model, ok2 := firstString(p[1])
		if ok1 && ok2 {
			return provider, model, true
		}
	}
	return "", "", false
}

func sessionModel(c Context) [2]gjson.Result {
	str := func(s string) gjson.Result { return gjson.Result{Type: gjson.String, Str: s} }
	return [2]gjson.Result{str(c.Session.ProviderID), str(c.Session.ModelID)}
}

func replyModel(key string) func(Context, gjson.Result) (any, bool) {
	return func(c Context, _ gjson.Result) (any, bool) {
		reply := gjson.ParseBytes(c.Reply)
		provider, model, ok := model([2]gjson.Result{reply.Get("providerID"), reply.Get("modelID")}, sessionModel(c))
		switch key {
		case "providerID":
			return provider, ok
		case "modelID":
			return model, ok
		}
		return map[string]string{"providerID": provider, "modelID": model}, ok
	}
}

func parentModel(key string) func(Context, gjson.Result) (any, bool) {
	return func(c Context, _ gjson.Result) (any, bool) {
		parent := gjson.ParseBytes(c.Parent)
		provider, model, ok := model([2]gjson.Result{parent.Get("model.providerID"), parent.Get("model.modelID")}, sessionModel(c))
		if key == "providerID" {
			return provider, ok
		}
		return model, ok
	}
}

func previousUser(c Context, _ gjson.Result) (any, bool) {
	return c.PreviousUser, c.PreviousUser != ""
}

func pathOf(key string) func(Context, gjson.Result) (any, bool) {
	return func(c Context, _ gjson.Result) (any, bool) {
		dir, root := c.Session.Directory, c.Session.Worktree
		switch key {
		case "cwd":
			return dir, dir != ""
		case "root":
			return root, root != ""
		}
		return map[string]string{"cwd": dir, "root": root}, dir != "" && root != ""
	}
}

func finishReason(c Context, _ gjson.Result) (any, bool) {
	if s, ok := firstString(gjson.GetBytes(c.Message, "finish")); ok {
		return s, true
	}
	return "unknown", true
}

var zeroCache = map[string]int{"read": 0, "write": 0}

func zeroTokens() map[string]any {
	return map[string]any{"input": 0, "output": 0, "reasoning": 0, "cache": zeroCache}
}

var emptyObject = map[string]any{}
