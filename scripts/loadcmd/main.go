// Command loadcmd drives a running memfs serve with concurrent clients that
// mix reads and writes, and reports requests/s, latency percentiles and
// every answer that was not a success. scripts/load starts the server and
// runs it.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
	"time"
)

type config struct {
	url, key     string
	clients      int
	duration     time.Duration
	memories     int
	contentBytes int
	format       string
}

// op is one kind of request and its share of the mix.
type op struct {
	name   string
	weight int
}

var mix = []op{
	{"get memory", 50},
	{"list memories", 15},
	{"update memory", 20},
	{"list versions", 5},
	{"create+delete memory", 10},
}

type sample struct {
	op     string
	d      time.Duration
	status int
}

type client struct {
	c   *http.Client
	cfg config
}

func (c *client) do(method, path string, body any) (int, []byte, error) {
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, nil, err
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, c.cfg.url+path, r)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("x-api-key", c.cfg.key)
	req.Header.Set("anthropic-beta", "agent-memory-2026-07-22")
	req.Header.Set("Content-Type", "application/json")
	res, err := c.c.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return res.StatusCode, b, err
}

func main() {
	var cfg config
	flag.StringVar(&cfg.url, "url", "", "the server's base URL (required)")
	flag.StringVar(&cfg.key, "key", "", "an API key (required)")
	flag.IntVar(&cfg.clients, "clients", 32, "concurrent clients")
	flag.DurationVar(&cfg.duration, "duration", 30*time.Second, "how long to run")
	flag.IntVar(&cfg.memories, "memories", 500, "memories preloaded in the store")
	flag.IntVar(&cfg.contentBytes, "content-bytes", 2048, "size of each write")
	flag.StringVar(&cfg.format, "format", "text", "text or json")
	flag.Parse()
	if cfg.url == "" || cfg.key == "" {
		fmt.Fprintln(os.Stderr, "loadcmd: -url and -key are required (scripts/load gives them)")
		os.Exit(2)
	}
	if err := run(cfg); err != nil {
		fmt.Fprintln(os.Stderr, "loadcmd:", err)
		os.Exit(1)
	}
}

func run(cfg config) error {
	tr := &http.Transport{MaxIdleConns: cfg.clients * 2, MaxIdleConnsPerHost: cfg.clients * 2, IdleConnTimeout: time.Minute}
	c := &client{c: &http.Client{Transport: tr, Timeout: 30 * time.Second}, cfg: cfg}

	status, body, err := c.do("POST", "/v1/memory_stores", map[string]string{"name": "load " + time.Now().Format(time.RFC3339)})
	if err != nil || status != 200 {
		return fmt.Errorf("create the store: %d %s %v", status, body, err)
	}
	var st struct{ ID string }
	json.Unmarshal(body, &st)
	base := "/v1/memory_stores/" + st.ID
	ids := make([]string, cfg.memories)
	content := strings.Repeat("x", cfg.contentBytes)
	for i := range ids {
		status, body, err := c.do("POST", base+"/memories", map[string]string{"path": fmt.Sprintf("/load/%03d/m%d.md", i%50, i), "content": content})
		if err != nil || status != 200 {
			return fmt.Errorf("preload memory %d: %d %s %v", i, status, body, err)
		}
		var m struct{ ID string }
		json.Unmarshal(body, &m)
		ids[i] = m.ID
	}

	total := 0
	for _, o := range mix {
		total += o.weight
	}
	var mu sync.Mutex
	var samples []sample
	var transport []string
	deadline := time.Now().Add(cfg.duration)
	var wg sync.WaitGroup
	for w := range cfg.clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			var mine []sample
			for n := 0; time.Now().Before(deadline); n++ {
				pick := rng.IntN(total)
				var o op
				for _, o = range mix {
					if pick < o.weight {
						break
					}
					pick -= o.weight
				}
				id := ids[rng.IntN(len(ids))]
				start := time.Now()
				var status int
				var err error
				switch o.name {
				case "get memory":
					status, _, err = c.do("GET", base+"/memories/"+id, nil)
				case "list memories":
					status, _, err = c.do("GET", base+fmt.Sprintf("/memories?path_prefix=/load/%03d/&limit=20", rng.IntN(50)), nil)
				case "update memory":
					status, _, err = c.do("POST", base+"/memories/"+id, map[string]string{"content": fmt.Sprintf("%d %d %s", w, n, content)})
				case "list versions":
					status, _, err = c.do("GET", base+"/memory_versions?limit=20&memory_id="+id, nil)
				case "create+delete memory":
					var b []byte
					status, b, err = c.do("POST", base+"/memories", map[string]string{"path": fmt.Sprintf("/scratch/%d/%d.md", w, n), "content": content})
					if err == nil && status == 200 {
						var m struct{ ID string }
						json.Unmarshal(b, &m)
						status, _, err = c.do("DELETE", base+"/memories/"+m.ID, nil)
					}
				}
				if err != nil {
					mu.Lock()
					transport = append(transport, err.Error())
					mu.Unlock()
					continue
				}
				mine = append(mine, sample{o.name, time.Since(start), status})
			}
			mu.Lock()
			samples = append(samples, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	return report(cfg, samples, transport)
}

func pct(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	i := int(p*float64(len(ds))+0.5) - 1
	return ds[max(0, min(i, len(ds)-1))]
}

type row struct {
	Op       string      `json:"op"`
	Requests int         `json:"requests"`
	PerSec   float64     `json:"per_second"`
	P50ms    float64     `json:"p50_ms"`
	P99ms    float64     `json:"p99_ms"`
	MaxMs    float64     `json:"max_ms"`
	Statuses map[int]int `json:"statuses"`
}

func report(cfg config, samples []sample, transport []string) error {
	by := map[string][]sample{}
	for _, s := range samples {
		by[s.op] = append(by[s.op], s)
		by["all"] = append(by["all"], s)
	}
	var rows []row
	unexpected := len(transport)
	for _, name := range append([]string{"all"}, opNames()...) {
		ss := by[name]
		ds := make([]time.Duration, len(ss))
		st := map[int]int{}
		for i, s := range ss {
			ds[i] = s.d
			st[s.status]++
			if name == "all" && s.status != 200 && s.status != 429 && s.status != 503 {
				unexpected++
			}
		}
		sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
		ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
		rows = append(rows, row{name, len(ss), float64(len(ss)) / cfg.duration.Seconds(), ms(pct(ds, .5)), ms(pct(ds, .99)), ms(pct(ds, 1)), st})
	}
	if cfg.format == "json" {
		json.NewEncoder(os.Stdout).Encode(map[string]any{"clients": cfg.clients, "duration_s": cfg.duration.Seconds(), "ops": rows, "unexpected": unexpected, "transport_errors": transport})
	} else {
		fmt.Printf("%d clients for %v against %s (create+delete counts as one, two requests)\n", cfg.clients, cfg.duration, cfg.url)
		fmt.Printf("%-22s %9s %9s %9s %9s %9s  %s\n", "op", "requests", "per s", "p50 ms", "p99 ms", "max ms", "statuses")
		for _, r := range rows {
			fmt.Printf("%-22s %9d %9.0f %9.2f %9.2f %9.2f  %v\n", r.Op, r.Requests, r.PerSec, r.P50ms, r.P99ms, r.MaxMs, r.Statuses)
		}
		fmt.Printf("errors other than 429/503: %d (transport: %d)\n", unexpected, len(transport))
		for i, e := range transport {
			if i == 5 {
				break
			}
			fmt.Println("  ", e)
		}
	}
	if unexpected > 0 {
		return fmt.Errorf("%d answers were errors other than 429/503 by design", unexpected)
	}
	return nil
}

func opNames() []string {
	var out []string
	for _, o := range mix {
		out = append(out, o.name)
	}
	return out
}
