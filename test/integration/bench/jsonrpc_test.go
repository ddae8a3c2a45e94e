package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"time"
)

// jsonRPC is a JSON-RPC 1.0 connection as OVSDB (RFC 7047) and OVS's
// unixctl servers speak it: requests and replies as a stream of JSON
// objects. BenchmarkDataPath uses it to monitor OVN's databases (each
// update timestamped as it arrives, with no tool's output to parse) and to
// send ovn-trace's daemon its trace commands.
type jsonRPC struct {
	conn net.Conn
	wmu  sync.Mutex
	enc  *json.Encoder

	mu      sync.Mutex
	nextID  int64
	pending map[int64]chan jsonRPCReply
	err     error // why the connection ended
	// notify gets every notification (method "update" from a monitor),
	// with the time it was read.
	notify func(at time.Time, method string, params json.RawMessage)
	done   chan struct{}
}

type jsonRPCReply struct {
	result json.RawMessage
	err    error
}

type jsonRPCMessage struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

// dialJSONRPC connects to network, address ("tcp", "127.0.0.1:6641" or
// "unix", a path) and reads replies and notifications until Close.
func dialJSONRPC(network, address string, notify func(at time.Time, method string, params json.RawMessage)) (*jsonRPC, error) {
	conn, err := net.DialTimeout(network, address, 10*time.Second)
	if err != nil {
		return nil, err
	}
	c := &jsonRPC{conn: conn, enc: json.NewEncoder(conn), pending: map[int64]chan jsonRPCReply{}, notify: notify, done: make(chan struct{})}
	go c.read()
	return c, nil
}

func (c *jsonRPC) read() {
	dec := json.NewDecoder(c.conn)
	var err error
	for {
		var m jsonRPCMessage
		if err = dec.Decode(&m); err != nil {
			break
		}
		at := time.Now()
		switch {
		case m.Method == "echo":
			// The server's inactivity probe: answered, or it hangs up. A
			// send that fails leaves a broken connection, which ends the
			// next Decode.
			_ = c.send(map[string]any{"id": m.ID, "result": m.Params, "error": nil})
		case m.Method != "":
			if c.notify != nil {
				c.notify(at, m.Method, m.Params)
			}
		default:
			var id int64
			if json.Unmarshal(m.ID, &id) != nil {
				continue
			}
			r := jsonRPCReply{result: m.Result}
			if len(m.Error) > 0 && string(m.Error) != "null" {
				r.err = fmt.Errorf("%s", m.Error)
			}
			c.mu.Lock()
			ch := c.pending[id]
			delete(c.pending, id)
			c.mu.Unlock()
			if ch != nil {
				ch <- r
			}
		}
	}
	c.mu.Lock()
	c.err = err
	for id, ch := range c.pending {
		ch <- jsonRPCReply{err: fmt.Errorf("connection ended: %w", err)}
		delete(c.pending, id)
	}
	c.mu.Unlock()
	close(c.done)
}

func (c *jsonRPC) send(msg any) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_ = c.conn.SetWriteDeadline(time.Now().Add(30 * time.Second))
	return c.enc.Encode(msg)
}

// call sends method with params and waits for its reply.
func (c *jsonRPC) call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	ch := make(chan jsonRPCReply, 1)
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return nil, fmt.Errorf("connection ended: %w", c.err)
	}
	c.nextID++
	id := c.nextID
	c.pending[id] = ch
	c.mu.Unlock()
	if err := c.send(map[string]any{"id": id, "method": method, "params": params}); err != nil {
		return nil, err
	}
	select {
	case r := <-ch:
		return r.result, r.err
	case <-ctx.Done():
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
		return nil, ctx.Err()
	}
}

// Close ends the connection.
func (c *jsonRPC) Close() error {
	err := c.conn.Close()
	<-c.done
	return err
}

// ovsdbTableUpdates is an OVSDB monitor's update: table -> row UUID -> the
// row's old and new values of the monitored columns.
type ovsdbTableUpdates map[string]map[string]struct {
	Old map[string]json.RawMessage `json:"old"`
	New map[string]json.RawMessage `json:"new"`
}

// ovsdbMonitor monitors columns of tables of database db over c, calling
// update with the rows as they are when the monitor starts, then with
// every change, each with the time it was read. c must have been dialled
// with a notify that passes "update" notifications to update (see
// monitorOVSDB).
func ovsdbMonitor(ctx context.Context, c *jsonRPC, db string, columns map[string][]string, update func(at time.Time, u ovsdbTableUpdates)) error {
	req := map[string]any{}
	for table, cols := range columns {
		req[table] = map[string]any{"columns": cols}
	}
	at := time.Now()
	raw, err := c.call(ctx, "monitor", []any{db, nil, req})
	if err != nil {
		return fmt.Errorf("monitoring %s: %w", db, err)
	}
	var u ovsdbTableUpdates
	if err := json.Unmarshal(raw, &u); err != nil {
		return fmt.Errorf("monitoring %s: %w", db, err)
	}
	update(at, u)
	return nil
}

// dialOVSDB connects to the OVSDB server at addr, "tcp:<host>:<port>" or
// "unix:<path>".
func dialOVSDB(addr string, notify func(at time.Time, method string, params json.RawMessage)) (*jsonRPC, error) {
	if path, ok := strings.CutPrefix(addr, "unix:"); ok {
		return dialJSONRPC("unix", path, notify)
	}
	hostPort, ok := strings.CutPrefix(addr, "tcp:")
	if !ok {
		return nil, fmt.Errorf("%s: want tcp:<host>:<port> or unix:<path>", addr)
	}
	return dialJSONRPC("tcp", hostPort, notify)
}

// monitorOVSDB connects to the OVSDB server at addr (see dialOVSDB) and
// monitors columns of tables of db, calling
// update with every change as it arrives; the returned func closes the
// connection.
func monitorOVSDB(ctx context.Context, addr, db string, columns map[string][]string, update func(at time.Time, u ovsdbTableUpdates)) (func(), error) {
	c, err := dialOVSDB(addr, func(at time.Time, method string, params json.RawMessage) {
		if method != "update" {
			return
		}
		var p []json.RawMessage
		if json.Unmarshal(params, &p) != nil || len(p) != 2 {
			return
		}
		var u ovsdbTableUpdates
		if json.Unmarshal(p[1], &u) == nil {
			update(at, u)
		}
	})
	if err != nil {
		return nil, err
	}
	if err := ovsdbMonitor(ctx, c, db, columns, update); err != nil {
		_ = c.Close()
		return nil, err
	}
	return func() { _ = c.Close() }, nil
}

// ovsdbSelect returns columns of every row of table in database db of
// the OVSDB server at addr (see dialOVSDB). The server returns rows that are
// equal in the selected columns once: _uuid is always selected, so that
// every row comes back.
func ovsdbSelect(ctx context.Context, addr, db, table string, columns []string) ([]map[string]json.RawMessage, error) {
	if !slices.Contains(columns, "_uuid") {
		columns = append([]string{"_uuid"}, columns...)
	}
	c, err := dialOVSDB(addr, nil)
	if err != nil {
		return nil, err
	}
	defer func() { _ = c.Close() }()
	raw, err := c.call(ctx, "transact", []any{db, map[string]any{"op": "select", "table": table, "where": []any{}, "columns": columns}})
	if err != nil {
		return nil, fmt.Errorf("selecting %s: %w", table, err)
	}
	var res []struct {
		Rows  []map[string]json.RawMessage `json:"rows"`
		Error string                       `json:"error"`
	}
	if err := json.Unmarshal(raw, &res); err != nil || len(res) != 1 {
		return nil, fmt.Errorf("selecting %s: %v (%s)", table, err, raw)
	}
	if res[0].Error != "" {
		return nil, fmt.Errorf("selecting %s: %s", table, res[0].Error)
	}
	return res[0].Rows, nil
}

// ovsdbString is an OVSDB string datum ("" if raw is not one).
func ovsdbString(raw json.RawMessage) string {
	var s string
	_ = json.Unmarshal(raw, &s)
	return s
}

// ovsdbAtoms are the atoms of an OVSDB datum that is a set (["set",
// [...]]) or a single atom, each still encoded.
func ovsdbAtoms(raw json.RawMessage) []json.RawMessage {
	var tagged []json.RawMessage
	if json.Unmarshal(raw, &tagged) == nil && len(tagged) == 2 && ovsdbString(tagged[0]) == "set" {
		var atoms []json.RawMessage
		_ = json.Unmarshal(tagged[1], &atoms)
		return atoms
	}
	if len(raw) == 0 {
		return nil
	}
	return []json.RawMessage{raw}
}

// ovsdbStrings are the strings of a set-of-strings datum.
func ovsdbStrings(raw json.RawMessage) []string {
	var out []string
	for _, a := range ovsdbAtoms(raw) {
		if s := ovsdbString(a); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// ovsdbUUIDs are the UUIDs of a set-of-references datum (["uuid", "..."]
// each).
func ovsdbUUIDs(raw json.RawMessage) []string {
	var out []string
	for _, a := range ovsdbAtoms(raw) {
		var pair []string
		if json.Unmarshal(a, &pair) == nil && len(pair) == 2 && pair[0] == "uuid" {
			out = append(out, pair[1])
		}
	}
	return out
}

// ovsdbMap is a string-to-string map datum (["map", [[k, v], ...]]).
func ovsdbMap(raw json.RawMessage) map[string]string {
	var tagged []json.RawMessage
	if json.Unmarshal(raw, &tagged) != nil || len(tagged) != 2 || ovsdbString(tagged[0]) != "map" {
		return nil
	}
	var pairs [][]string
	if json.Unmarshal(tagged[1], &pairs) != nil {
		return nil
	}
	out := make(map[string]string, len(pairs))
	for _, p := range pairs {
		if len(p) == 2 {
			out[p[0]] = p[1]
		}
	}
	return out
}

// unixctl runs command with args on the OVS/OVN unixctl server at socket
// path (as ovn-appctl -t path does) and returns its text.
func unixctl(ctx context.Context, path, command string, args ...string) (string, error) {
	c, err := dialJSONRPC("unix", path, nil)
	if err != nil {
		return "", err
	}
	defer func() { _ = c.Close() }()
	return unixctlCall(ctx, c, command, args...)
}

// unixctlCall is unixctl on an open connection.
func unixctlCall(ctx context.Context, c *jsonRPC, command string, args ...string) (string, error) {
	if args == nil {
		args = []string{}
	}
	raw, err := c.call(ctx, command, args)
	if err != nil {
		var s string
		if json.Unmarshal([]byte(err.Error()), &s) == nil {
			return "", errors.New(s)
		}
		return "", err
	}
	return ovsdbString(raw), nil
}
