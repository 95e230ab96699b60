package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"
)

// The decoders' errors speak of Go types ("field bogus not found in type
// config.Config", "cannot unmarshal !!str into []string"). jsonError and
// yamlError say the same in the file's own terms: its keys, and what kind
// of value each takes.

var (
	yamlUnknown  = regexp.MustCompile(`^(line \d+): field (.+) not found in type config\.(\w+)$`)
	yamlMismatch = regexp.MustCompile("^(line \\d+): cannot unmarshal !!(\\w+)(?: `(.*)`)? into (.+)$")
	jsonUnknown  = regexp.MustCompile(`^json: unknown field "(.+)"$`)
)

// yamlError rewrites a YAML decoding error, one problem per line.
func yamlError(err error) string {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return strings.TrimPrefix(err.Error(), "yaml: ")
	}
	out := make([]string, len(te.Errors))
	for i, e := range te.Errors {
		out[i] = e
		if m := yamlUnknown.FindStringSubmatch(e); m != nil {
			out[i] = fmt.Sprintf("%s: unknown key %q (%s)", m[1], m[2], knownKeys(m[3]))
		} else if m := yamlMismatch.FindStringSubmatch(e); m != nil && m[3] != "" {
			out[i] = fmt.Sprintf("%s: %q is %s, where %s belongs", m[1], m[3], yamlKind(m[2]), goKind(m[4]))
		} else if m != nil {
			out[i] = fmt.Sprintf("%s: %s, where %s belongs", m[1], yamlKind(m[2]), goKind(m[4]))
		}
	}
	return strings.Join(out, "; ")
}

// jsonError rewrites a JSON decoding error.
func jsonError(err error) string {
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &te):
		return fmt.Sprintf("%s: a JSON %s, where %s belongs", te.Field, te.Value, goKind(te.Type.String()))
	case errors.As(err, &se):
		return fmt.Sprintf("not valid JSON (at byte %d): %s", se.Offset, se.Error())
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "not valid JSON: it ends before its last value does"
	}
	if m := jsonUnknown.FindStringSubmatch(err.Error()); m != nil {
		// The decoder does not say whether the key was at the top or in a
		// suppression.
		return fmt.Sprintf("unknown key %q (%s; %s)", m[1], knownKeys("Config"), knownKeys("Suppression"))
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

// knownKeys lists the keys of the config type named typ.
func knownKeys(typ string) string {
	var t reflect.Type
	where := "a config file"
	switch typ {
	case "Config":
		t = reflect.TypeOf(Config{})
	case "Suppression":
		t, where = reflect.TypeOf(Suppression{}), "a suppression"
	default:
		return "see docs/ci.md#the-config-file"
	}
	var keys []string
	for i := 0; i < t.NumField(); i++ {
		if k, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ","); k != "" && k != "-" {
			keys = append(keys, k)
		}
	}
	return where + " takes " + strings.Join(keys, ", ")
}

// yamlKind names a YAML tag's kind of value.
func yamlKind(tag string) string {
	switch tag {
	case "str":
		return "a string"
	case "int", "float":
		return "a number"
	case "bool":
		return "true or false"
	case "seq":
		return "a list"
	case "map":
		return "a mapping"
	}
	return "a " + tag
}

// goKind names the kind of value a Go type of the config holds.
func goKind(typ string) string {
	switch {
	case strings.HasPrefix(typ, "[]"):
		return "a list"
	case strings.HasPrefix(typ, "map["):
		return "a mapping"
	case typ == "string":
		return "a string"
	case strings.HasPrefix(typ, "config."):
		return "a mapping"
	}
	return typ
}
