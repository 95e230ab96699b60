package ocschema

// Quirk is a key the schema allows but real OpenCode cannot serve
// whatever its value: GET /session/:id/message answers 400 for any record
// that has it. These are observations of OpenCode 1.18.33, not part of its
// published schema, and are checked against it by
// internal/opencodetest's TestSchemaVerdicts.
type Quirk struct {
	Object string
	Key    string
	// Observed is OpenCode's answer, shortened.
	Observed string
	// Repair is the smallest change that makes the record load.
	Repair string
	// Why explains what the key is and why removing it is safe.
	Why string
}

var quirks = []Quirk{
	{
		Object:   "UserMessage",
		Key:      "format",
		Observed: `400 "Expected OutputFormatText, got {\"type\":\"text\"}" (OutputFormatJsonSchema alike)`,
		Repair:   "remove the key",
		Why: "format asks for structured output for that one prompt; OpenCode's server declares it with classes and " +
			"cannot encode the plain object it reads back from storage. A past prompt's format changes nothing later",
	},
}

// Quirks lists the keys real OpenCode cannot serve.
func Quirks() []Quirk { return quirks }

// QuirkFor returns the entry for key Key of object type Object, or
// nil.
func QuirkFor(object, key string) *Quirk {
	for i := range quirks {
		if quirks[i].Object == object && quirks[i].Key == key {
			return &quirks[i]
		}
	}
	return nil
}
