package oc2fixture

import (
	"database/sql"
	"encoding/json"
)

// Native sessions. Message data follows Session.Message in
// packages/core/src/session/message.ts of anomalyco/opencode (commit
// 08e3e1f96710): the row's id and type are columns, the rest is data, times
// are epoch milliseconds. "idle" is not in that file; its shape is the one
// public captures of 2.0.x databases show.
const (
	nativeProject = "5f3c9a1e0b7d4c2a8e6f1d3b9a7c5e2f4d6b8a0c"
	nativeDir     = "/home/user/projects/app"
	nativeMain    = "ses_dfffa0000000NativeMain0001"
	nativeChild   = "ses_dfffa0001000NativeChild001"
	nativeGlobal  = "ses_dfffa0002000NativeGlobal01"
	nativeT0      = int64(1795400000000)
)

type nativeMsg struct {
	id, typ string
	data    map[string]any
}

func at(ms int64) map[string]any { return map[string]any{"created": nativeT0 + ms} }

func nativeSessions(db *sql.DB) error {
	model := map[string]any{"id": "claude-sonnet-4-5", "providerID": "anthropic", "variant": "default"}
	main := []nativeMsg{
		{"msg_20a4b0001000NativeUser0001", "user", map[string]any{"text": "List the files and tell me what the project is.", "time": at(0)}},
		{"msg_20a4b0002000NativeAgent001", "agent-switched", map[string]any{"agent": "plan", "time": at(1000)}},
		{"msg_20a4b0003000NativeSystem01", "system", map[string]any{"text": "You are in plan mode. Do not change files.", "time": at(1100)}},
		{"msg_20a4b0004000NativeAsst0001", "assistant", map[string]any{
			"agent": "plan", "model": model,
			"content": []any{
				map[string]any{"type": "reasoning", "id": "rs_1", "text": "I will list the files first.",
					"providerMetadata": map[string]any{"anthropic": map[string]any{"signature": "c2lnbmF0dXJl"}}},
				map[string]any{"type": "text", "id": "tx_1", "text": "Listing the files."},
				map[string]any{"type": "tool", "id": "toolu_01NativeShell0001", "name": "shell",
					"state": map[string]any{"status": "completed", "input": map[string]any{"command": "ls"},
						"content": []any{map[string]any{"type": "text", "text": "README.md\ngo.mod\n"}}, "structured": map[string]any{}},
					"time": map[string]any{"created": nativeT0 + 2000, "ran": nativeT0 + 2100, "completed": nativeT0 + 2200}},
				map[string]any{"type": "tool", "id": "toolu_01NativeRead00001", "name": "read",
					"state": map[string]any{"status": "error", "input": map[string]any{"path": "/nonexistent"},
						"content": []any{}, "structured": map[string]any{},
						"error": map[string]any{"type": "unknown", "message": "ENOENT: no such file or directory"}},
					"time": map[string]any{"created": nativeT0 + 2300, "completed": nativeT0 + 2400}},
			},
			"finish": "tool-calls", "cost": 0.012,
			"tokens": map[string]any{"input": 1200, "output": 80, "reasoning": 12, "cache": map[string]any{"read": 0, "write": 1024}},
			"time":   map[string]any{"created": nativeT0 + 1500, "completed": nativeT0 + 2500}}},
		{"msg_20a4b0005000NativeShell001", "shell", map[string]any{"callID": "sh_1", "command": "git status",
			"output": "On branch main\nnothing to commit\n", "time": map[string]any{"created": nativeT0 + 3000, "completed": nativeT0 + 3100}}},
		{"msg_20a4b0006000NativeSynth001", "synthetic", map[string]any{"sessionID": nativeMain, "text": "The background task finished.", "time": at(3200)}},
		{"msg_20a4b0007000NativeModel001", "model-switched", map[string]any{"model": map[string]any{"id": "claude-haiku-4-5", "providerID": "anthropic"}, "time": at(3300)}},
		{"msg_20a4b0008000NativeAsst0002", "assistant", map[string]any{
			"agent": "plan", "model": map[string]any{"id": "claude-haiku-4-5", "providerID": "anthropic", "variant": "default"},
			"content": []any{map[string]any{"type": "text", "id": "tx_2", "text": "It is a Go module with a README."}},
			"finish":  "stop", "cost": 0.001,
			"tokens": map[string]any{"input": 1400, "output": 12, "reasoning": 0, "cache": map[string]any{"read": 1024, "write": 0}},
			"time":   map[string]any{"created": nativeT0 + 3400, "completed": nativeT0 + 3900}}},
		{"msg_20a4b0009000NativeCompact1", "compaction", map[string]any{"reason": "manual",
			"summary": "The user asked what the project is; it is a Go module.", "recent": "[User]: List the files…", "time": at(4000)}},
		{"msg_20a4b000a000NativeIdle0001", "idle", map[string]any{"outcome": "succeeded", "time": at(4100)}},
		{"msg_20a4b000b000NativeUser0002", "user", map[string]any{"text": "Thanks.", "time": at(5000)}},
		{"msg_20a4b000c000NativeAsst0003", "assistant", map[string]any{
			"agent": "plan", "model": model, "content": []any{},
			"error": map[string]any{"type": "provider.error", "message": "Overloaded"},
			"time":  at(5100)}},
	}
	child := []nativeMsg{
		{"msg_20a4b0100000NativeChild001", "user", map[string]any{"text": "Summarise README.md.", "time": at(2050)}},
		{"msg_20a4b0101000NativeChild002", "assistant", map[string]any{"agent": "general", "model": model,
			"content": []any{map[string]any{"type": "text", "id": "tx_c", "text": "It describes the app."}}, "finish": "stop",
			"time": map[string]any{"created": nativeT0 + 2060, "completed": nativeT0 + 2090}}},
	}
	global := []nativeMsg{
		{"msg_20a4b0200000NativeGlobal01", "user", map[string]any{"text": "What is in my home directory?", "time": at(6000)}},
		{"msg_20a4b0201000NativeGlobal02", "assistant", map[string]any{"agent": "build", "model": model,
			"content": []any{map[string]any{"type": "text", "id": "tx_g", "text": "Your dotfiles."}}, "finish": "stop",
			"time": map[string]any{"created": nativeT0 + 6010, "completed": nativeT0 + 6050}}},
	}
	modelJSON, _ := json.Marshal(model)
	stmts := []struct {
		q    string
		args []any
	}{
		{`INSERT INTO project (id, worktree, vcs, name, time_created, time_updated, time_active, sandboxes) VALUES (?, ?, 'git', 'app', ?, ?, ?, '[]')`,
			[]any{nativeProject, nativeDir, nativeT0, nativeT0, nativeT0}},
		{`INSERT INTO project (id, worktree, time_created, time_updated, time_active, sandboxes) VALUES ('global', '/', ?, ?, ?, '[]')`,
			[]any{nativeT0, nativeT0, nativeT0}},
	}
	session := func(id, project, parent, slug, dir, path, title, agent string, updated int64, msgs []nativeMsg) {
		var p any
		if parent != "" {
			p = parent
		}
		stmts = append(stmts, struct {
			q    string
			args []any
		}{`INSERT INTO session_v2 (id, project_id, parent_id, slug, directory, path, title, version, agent, model,
			cost, tokens_input, tokens_output, tokens_reasoning, tokens_cache_read, tokens_cache_write, time_created, time_updated, time_idle, idle_outcome)
			VALUES (?, ?, ?, ?, ?, ?, ?, '2.0.25', ?, ?, 0.013, 2600, 92, 12, 1024, 1024, ?, ?, ?, 'succeeded')`,
			[]any{id, project, p, slug, dir, path, title, agent, string(modelJSON), nativeT0, nativeT0 + updated, nativeT0 + updated}})
		for seq, m := range msgs {
			data, _ := json.Marshal(m.data)
			created := int64(m.data["time"].(map[string]any)["created"].(int64))
			stmts = append(stmts, struct {
				q    string
				args []any
			}{`INSERT INTO session_message (id, session_id, type, seq, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?, ?, ?)`,
				[]any{m.id, id, m.typ, seq, created, created, string(data)}})
		}
		stmts = append(stmts, struct {
			q    string
			args []any
		}{`INSERT INTO event_sequence (aggregate_id, seq) VALUES (?, ?)`, []any{id, len(msgs) - 1}})
	}
	session(nativeMain, nativeProject, "", "native-main", nativeDir, "", "What is this project?", "plan", 5100, main)
	session(nativeChild, nativeProject, nativeMain, "native-child", nativeDir, "", "Summarise README (@general subagent)", "general", 2090, child)
	session(nativeGlobal, "global", "", "native-global", "/home/user", "home/user", "Home directory", "build", 6050, global)
	for _, s := range stmts {
		if _, err := db.Exec(s.q, s.args...); err != nil {
			return err
		}
	}
	return nil
}
