package oc2fixture

import (
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
)

// The rows damage adds, which the importer skips.
const (
	rejectedMulti   = "rejected-multi"
	rejectedNoModel = "rejected-no-model"
	// missingProject is a project id no row has.
	missingProject = "c0ffee0000000000000000000000000000000000"
	// Rows of the multi-turn session the damage applies to.
	multiAsst1 = "msg_1fed5a730001XEXjFKDsbxeaHt" // first assistant message: loses tokens
	multiUser2 = "msg_1fed5d9330015rfaapLkhNIVDa" // second user message: not JSON
	plainAsst  = "msg_1fed5416d001xO9zyvrPKgrNA5"
	plainUser  = "msg_1fed5361d001QlOpfHagQSBZKN"
)

// damage adds two 1.x sessions with rows the 2.x importer cannot decode,
// the way older versions and other tools left them:
//
//   - rejected-multi (a copy of the multi-turn session, in a project whose
//     row is gone): the first assistant message has no tokens; the second
//     user message's data is cut off mid-JSON; the second assistant
//     message's reasoning part was rewritten as a foreign "thinking" part
//     (what oh-my-opencode's recovery wrote); and one part row names a
//     message of another session;
//   - rejected-no-model (a copy of the plain session without its answer):
//     its only user message has no model, and the session row none either.
func damage(db *sql.DB) error {
	var reasoning string
	if err := db.QueryRow(`SELECT id FROM part WHERE message_id = 'msg_1fed5e506001uob7bfldp5qKss' AND data LIKE '%"reasoning"%'`).Scan(&reasoning); err != nil {
		return fmt.Errorf("the multi-turn session's last reasoning part: %w", err)
	}
	err := cloneSession(db, realMulti, rejectedMulti, After, func(table, id, data string) string {
		switch id {
		case multiAsst1:
			data, _ = sjson.Delete(data, "tokens")
		case multiUser2:
			data = data[:len(data)/2]
		case reasoning:
			text := gjsonString(data, "text")
			data = `{"type":"thinking","thinking":` + quote(text) + `,"signature":"` + gjsonString(data, "metadata.anthropic.signature") + `"}`
		}
		return data
	})
	if err != nil {
		return err
	}
	multi := CloneID(realMulti, rejectedMulti, After)
	if _, err := db.Exec(`UPDATE session SET project_id = ? WHERE id = ?`, missingProject, multi); err != nil {
		return err
	}
	orphan := CloneID("prt_1fed5e6a9001OrphanPart0001", rejectedMulti, After)
	if _, err := db.Exec(`INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?, ?)`,
		orphan, plainAsst, multi, 1795276796000+After, 1795276796000+After, `{"type":"text","text":"A part filed under another session's message."}`); err != nil {
		return err
	}
	err = cloneSession(db, realPlain, rejectedNoModel, After+3600000, func(table, id, data string) string {
		if table == "part" || id == plainAsst {
			var owner string
			_ = db.QueryRow(`SELECT message_id FROM part WHERE id = ?`, id).Scan(&owner)
			if id == plainAsst || owner == plainAsst {
				return ""
			}
			return data
		}
		data, _ = sjson.Delete(data, "model")
		return data
	})
	if err != nil {
		return err
	}
	_, err = db.Exec(`UPDATE session SET model = NULL, agent = NULL WHERE id = ?`, CloneID(realPlain, rejectedNoModel, After+3600000))
	return err
}

func gjsonString(data, path string) string { return gjson.Get(data, path).Str }

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
