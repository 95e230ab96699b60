package opencodetest

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
)

// EditPart rewrites the data of one stored part of an OpenCode 1.2+ data
// dir (opencode.db) with f, the way a test breaks or repairs a session by
// hand. No OpenCode may run on the data dir meanwhile.
func EditPart(dataDir, partID string, f func(data map[string]any)) error {
	return editRow(dataDir, "part", partID, f)
}

// EditMessage rewrites the data of one stored message (see EditPart).
func EditMessage(dataDir, messageID string, f func(data map[string]any)) error {
	return editRow(dataDir, "message", messageID, f)
}

// DeletePart removes one stored part (see EditPart).
func DeletePart(dataDir, partID string) error {
	db, err := openData(dataDir)
	if err != nil {
		return err
	}
	defer db.Close()
	res, err := db.Exec(`DELETE FROM part WHERE id = ?`, partID)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return fmt.Errorf("part %s not found", partID)
	}
	return nil
}

// openData opens the database of a data dir (DBFile).
func openData(dataDir string) (*sql.DB, error) {
	path := DBFile(dataDir)
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("%s: only OpenCode 1.2+ SQLite data can be edited: %w", dataDir, err)
	}
	return OpenDB(path)
}

func editRow(dataDir, table, id string, f func(map[string]any)) error {
	db, err := openData(dataDir)
	if err != nil {
		return err
	}
	defer db.Close()
	var raw string
	if err := db.QueryRow(`SELECT data FROM `+table+` WHERE id = ?`, id).Scan(&raw); err != nil {
		return fmt.Errorf("%s %s: %w", table, id, err)
	}
	var data map[string]any
	if err := json.Unmarshal([]byte(raw), &data); err != nil {
		return fmt.Errorf("%s %s: %w", table, id, err)
	}
	f(data)
	b, err := json.Marshal(data)
	if err != nil {
		return err
	}
	_, err = db.Exec(`UPDATE `+table+` SET data = ? WHERE id = ?`, string(b), id)
	return err
}
