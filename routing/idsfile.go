package routing

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/metalsim/metalsim/fileio"
	"github.com/metalsim/metalsim/tile"
)

// IDsFile is a routing read from a file: for every token, Used distinct expert ids.
type IDsFile struct {
	File   string  // where it came from (for messages)
	Tokens int     // n
	Used   int     // n_used
	IDs    []int32 // ids[t*Used+s] = expert of slot s of token t
}

// IDs file formats.
const (
	// IDsRaw is n × n_used little-endian int32, token after token (what
	// ggml's ids tensor holds).
	IDsRaw = "raw"
	// IDsCSV is one token per line, n_used comma-separated decimal expert ids;
	// blank lines and lines starting with '#' are skipped.
	IDsCSV = "csv"
)

// IDsFormat tells the format of an ids file: by extension (.csv and .txt are
// CSV; .bin, .raw and .i32 are raw), else by content (text is CSV: raw ids of
// any expert below 2^24 contain zero bytes).
func IDsFormat(file string, data []byte) string {
	switch strings.ToLower(filepath.Ext(file)) {
	case ".csv", ".txt":
		return IDsCSV
	case ".bin", ".raw", ".i32":
		return IDsRaw
	}
	for _, b := range data {
		if (b < 0x20 || b > 0x7e) && b != '\n' && b != '\r' && b != '\t' {
			return IDsRaw
		}
	}
	return IDsCSV
}

// ReadIDsFile reads and checks an ids file (see ParseIDs).
func ReadIDsFile(file string, used, experts int) (*IDsFile, error) {
	return fileio.Load(file, fileio.RoutingIDs, func(data []byte) (*IDsFile, error) {
		return ParseIDs(file, data, used, experts)
	})
}

// ParseIDs parses an ids file (raw int32 or CSV, see IDsFormat) of used experts
// per token and checks every token: each id must name one of experts experts
// and a token's ids must be distinct. Errors name the file, the token and the
// slot (and the line, for CSV).
func ParseIDs(file string, data []byte, used, experts int) (*IDsFile, error) {
	if experts < 1 || experts > tile.MaxExperts {
		return nil, fmt.Errorf("ids file %s: n_mats = %d: must be in [1, %d]", file, experts, tile.MaxExperts)
	}
	if used < 1 || used > experts {
		return nil, fmt.Errorf("ids file %s: n_used = %d: must be in [1, n_mats = %d]", file, used, experts)
	}
	if len(data) == 0 {
		return nil, fmt.Errorf("ids file %s: empty", file)
	}
	if bytes.HasPrefix(data, []byte("\xef\xbb\xbf")) && IDsFormat(file, data[3:]) == IDsCSV {
		data = data[3:] // a UTF-8 byte-order mark some spreadsheets write
	}
	var ids *IDsFile
	var err error
	if IDsFormat(file, data) == IDsRaw {
		ids, err = parseRawIDs(file, data, used, experts)
	} else {
		ids, err = parseCSVIDs(file, data, used, experts)
	}
	if err != nil {
		return nil, err
	}
	ids.File = file
	return ids, nil
}

func parseRawIDs(file string, data []byte, used, experts int) (*IDsFile, error) {
	if len(data)%4 != 0 {
		return nil, fmt.Errorf("ids file %s (raw int32): %d bytes: not a whole number of 4-byte ids", file, len(data))
	}
	n := len(data) / 4
	if n%used != 0 {
		return nil, fmt.Errorf("ids file %s (raw int32): %d ids: must be n × n_used, a multiple of n_used = %d", file, n, used)
	}
	tokens := n / used
	if tokens > tile.MaxTokens {
		return nil, fmt.Errorf("ids file %s (raw int32): %d tokens: at most %d", file, tokens, tile.MaxTokens)
	}
	ids := make([]int32, n)
	for i := range ids {
		ids[i] = int32(binary.LittleEndian.Uint32(data[4*i:]))
	}
	chk := newTokenChecker(experts)
	for t := 0; t < tokens; t++ {
		if err := chk.check(t, ids[t*used:(t+1)*used]); err != nil {
			return nil, fmt.Errorf("ids file %s (raw int32): %w", file, err)
		}
	}
	return &IDsFile{Tokens: tokens, Used: used, IDs: ids}, nil
}

func parseCSVIDs(file string, data []byte, used, experts int) (*IDsFile, error) {
	var ids []int32
	row := make([]int32, used)
	chk := newTokenChecker(experts)
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	line, t := 0, 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		fields := strings.Split(text, ",")
		if len(fields) != used {
			return nil, fmt.Errorf("ids file %s:%d: token %d: %d ids, want n_used = %d", file, line, t, len(fields), used)
		}
		for s, f := range fields {
			v, err := strconv.ParseInt(strings.TrimSpace(f), 10, 32)
			if err != nil {
				return nil, fmt.Errorf("ids file %s:%d: token %d slot %d: %q: not an integer expert id", file, line, t, s, strings.TrimSpace(f))
			}
			row[s] = int32(v)
		}
		if err := chk.check(t, row); err != nil {
			return nil, fmt.Errorf("ids file %s:%d: %w", file, line, err)
		}
		if t >= tile.MaxTokens {
			return nil, fmt.Errorf("ids file %s:%d: more than %d tokens", file, line, tile.MaxTokens)
		}
		ids = append(ids, row...)
		t++
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("ids file %s:%d: line longer than 1 MiB", file, line+1)
		}
		return nil, fmt.Errorf("ids file %s: %w", file, err)
	}
	if t == 0 {
		return nil, fmt.Errorf("ids file %s (csv): no tokens (want one line of n_used = %d comma-separated expert ids per token)", file, used)
	}
	return &IDsFile{Tokens: t, Used: used, IDs: ids}, nil
}

// tokenChecker checks tokens in O(n_used) each with O(experts) memory: seen[e]
// holds 1 + the token that last used expert e, slot[e] its slot.
type tokenChecker struct {
	experts int
	seen    []int
	slot    []int
}

func newTokenChecker(experts int) *tokenChecker {
	return &tokenChecker{experts: experts, seen: make([]int, experts), slot: make([]int, experts)}
}

func (c *tokenChecker) check(t int, row []int32) error {
	for s, e := range row {
		if e < 0 || int(e) >= c.experts {
			return fmt.Errorf("token %d slot %d: expert %d: must be in [0, n_mats = %d)", t, s, e, c.experts)
		}
		if c.seen[e] == t+1 {
			return fmt.Errorf("token %d slot %d: expert %d repeats slot %d (a token's n_used experts must be distinct)", t, s, e, c.slot[e])
		}
		c.seen[e], c.slot[e] = t+1, s
	}
	return nil
}

// CountIDs checks ids against a problem (n × n_used values, every id an expert,
// distinct within a token) and returns the tokens per expert, using O(experts)
// memory besides the ids.
func CountIDs(p tile.Problem, ids []int32) ([]int32, error) {
	if err := checkRoutingProblem(p); err != nil {
		return nil, err
	}
	if len(ids) != p.Tokens*p.Used {
		return nil, fmt.Errorf("ids: %d values, want n × n_used = %d × %d = %d", len(ids), p.Tokens, p.Used, p.Tokens*p.Used)
	}
	chk := newTokenChecker(p.Experts)
	tpe := make([]int32, p.Experts)
	for t := 0; t < p.Tokens; t++ {
		row := ids[t*p.Used : (t+1)*p.Used]
		if err := chk.check(t, row); err != nil {
			return nil, fmt.Errorf("ids: %w", err)
		}
		for _, e := range row {
			tpe[e]++
		}
	}
	return tpe, nil
}

// WriteIDsCSV writes ids as CSV, one token of used ids per line.
func WriteIDsCSV(w io.Writer, used int, ids []int32) error {
	if used < 1 || len(ids)%used != 0 {
		return fmt.Errorf("ids: %d values: not a multiple of n_used = %d", len(ids), used)
	}
	bw := bufio.NewWriter(w)
	var buf []byte
	for t := 0; t < len(ids); t += used {
		buf = buf[:0]
		for s, e := range ids[t : t+used] {
			if s > 0 {
				buf = append(buf, ',')
			}
			buf = strconv.AppendInt(buf, int64(e), 10)
		}
		buf = append(buf, '\n')
		if _, err := bw.Write(buf); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// EncodeIDsRaw returns ids as little-endian int32 bytes (the raw format).
func EncodeIDsRaw(ids []int32) []byte {
	out := make([]byte, 4*len(ids))
	for i, e := range ids {
		binary.LittleEndian.PutUint32(out[4*i:], uint32(e))
	}
	return out
}
