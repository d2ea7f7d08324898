package versions

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// JSONProblem says what is wrong with a JSON text that encoding/json
// refused, in the terms of the text (the character, the field, the kind of
// value expected) rather than of Go's types: "unexpected 'o' at character
// 12", not "invalid character 'o' in literal null (expecting 'u')".
func JSONProblem(err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		msg := syn.Error()
		if msg == "unexpected end of JSON input" {
			return "the JSON ends before it is complete (a missing }, ] or \")"
		}
		if rest, ok := strings.CutPrefix(msg, "invalid character "); ok {
			ch, _, _ := strings.Cut(rest, " ")
			if ch == "'\\n'" || ch == "'\\t'" || ch == "'\\r'" {
				return fmt.Sprintf("a control character (%s) at character %d is not allowed in a JSON string: escape it", ch, syn.Offset)
			}
			return fmt.Sprintf("unexpected %s at character %d: it is not valid JSON", ch, syn.Offset)
		}
		return fmt.Sprintf("it is not valid JSON at character %d", syn.Offset)
	case errors.As(err, &typ):
		if typ.Field == "" {
			return "it must be a JSON object, not " + JSONValueKind(typ.Value)
		}
		return fmt.Sprintf("`%s` must be %s, not %s", typ.Field, jsonGoKind(typ.Type.String()), JSONValueKind(typ.Value))
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "the JSON ends before it is complete (a missing }, ] or \")"
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

// JSONValueKind names a kind of JSON value as encoding/json reports it
// ("array", "number", "number -1", "string", "bool", "object").
func JSONValueKind(v string) string {
	kind, _, _ := strings.Cut(v, " ")
	switch kind {
	case "array", "object":
		return "an " + kind
	case "bool":
		return "true or false"
	case "number", "string":
		return "a " + kind
	}
	return v
}

// jsonGoKind names what a Go type takes in JSON.
func jsonGoKind(goType string) string {
	t := strings.TrimLeft(goType, "*")
	switch {
	case t == "string":
		return "a string"
	case strings.Contains(t, "int"):
		return "an integer"
	case strings.Contains(t, "float"):
		return "a number"
	case t == "bool":
		return "true or false"
	case strings.HasPrefix(t, "[]"):
		return "an array"
	}
	return "an object"
}
