package webui

import (
	"fmt"
	"html/template"
	"time"
)

// pageNames are the pages, each its templates/NAME.html with the layout.
var pageNames = []string{"error", "signin", "stores", "tree", "history", "version", "diff", "confirm", "sessions", "session", "undo", "search"}

var funcs = template.FuncMap{
	"when":   func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05 UTC") },
	"size":   humanSize,
	"chunks": chunks,
}

// rowsPerChunk is how many rows of a long listing go in one block. The
// stylesheet lets the browser skip the layout and paint of the blocks
// out of view (content-visibility), so a folder of thousands of files
// shows as soon as its first screen is laid out; a block's size before
// it was ever seen is guessed from this many rows.
const rowsPerChunk = 100

// chunks cuts a listing into blocks of rowsPerChunk rows.
func chunks(lines []treeLine) [][]treeLine {
	var out [][]treeLine
	for len(lines) > rowsPerChunk {
		out = append(out, lines[:rowsPerChunk])
		lines = lines[rowsPerChunk:]
	}
	if len(lines) > 0 {
		out = append(out, lines)
	}
	return out
}

func parsePages() map[string]*template.Template {
	out := map[string]*template.Template{}
	for _, n := range pageNames {
		out[n] = template.Must(template.New(n).Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/"+n+".html"))
	}
	return out
}

// humanSize writes a byte count as people read it: 900 B, 4.0 KiB.
func humanSize(n any) string {
	var b int
	switch v := n.(type) {
	case int:
		b = v
	case *int:
		if v == nil {
			return ""
		}
		b = *v
	}
	if b < 1024 {
		return fmt.Sprintf("%d B", b)
	}
	return fmt.Sprintf("%.1f KiB", float64(b)/1024)
}
