package oc2fixture

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
)

// Dump renders a database's schema and rows as text, tables in name order
// and rows in primary-key order: what two builds of a fixture must agree
// on, whatever the file's bytes.
func Dump(path string) (string, error) {
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		return "", err
	}
	defer db.Close()
	var b strings.Builder
	objs, err := db.Query(`SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY name`)
	if err != nil {
		return "", err
	}
	var tables []string
	for objs.Next() {
		var typ, name, ddl string
		if err := objs.Scan(&typ, &name, &ddl); err != nil {
			objs.Close()
			return "", err
		}
		fmt.Fprintf(&b, "%s\n", ddl)
		if typ == "table" {
			tables = append(tables, name)
		}
	}
	objs.Close()
	for _, t := range tables {
		rows, err := db.Query(`SELECT * FROM "` + t + `" ORDER BY 1, 2`)
		if err != nil {
			return "", err
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				rows.Close()
				return "", err
			}
			for i, v := range vals {
				if bs, ok := v.([]byte); ok {
					vals[i] = string(bs)
				}
			}
			line, _ := json.Marshal(vals)
			fmt.Fprintf(&b, "%s %s\n", t, line)
		}
		rows.Close()
	}
	return b.String(), nil
}
