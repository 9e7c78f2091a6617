package components

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
)

// maxFrame bounds one frame's header and blob (a page's body, a page of
// records): a host that writes more is broken.
const maxFrame = 1 << 30

// frame is one message between Go and the host: a JSON header and a blob
// (a response body, or records as JSON lines). On the wire: two big-endian
// uint32 lengths, the header, the blob.
type frame struct {
	header json.RawMessage
	blob   []byte
}

func writeFrame(w *bufio.Writer, header any, blob []byte) error {
	h, err := json.Marshal(header)
	if err != nil {
		return err
	}
	var lengths [8]byte
	binary.BigEndian.PutUint32(lengths[:4], uint32(len(h)))
	binary.BigEndian.PutUint32(lengths[4:], uint32(len(blob)))
	if _, err := w.Write(lengths[:]); err != nil {
		return err
	}
	if _, err := w.Write(h); err != nil {
		return err
	}
	if _, err := w.Write(blob); err != nil {
		return err
	}
	return w.Flush()
}

func readFrame(r *bufio.Reader) (frame, error) {
	var lengths [8]byte
	if _, err := io.ReadFull(r, lengths[:]); err != nil {
		return frame{}, err
	}
	n, m := binary.BigEndian.Uint32(lengths[:4]), binary.BigEndian.Uint32(lengths[4:])
	if n > maxFrame || m > maxFrame {
		return frame{}, fmt.Errorf("a frame of %d+%d bytes", n, m)
	}
	f := frame{header: make([]byte, n)}
	if _, err := io.ReadFull(r, f.header); err != nil {
		return frame{}, err
	}
	if m > 0 {
		f.blob = make([]byte, m)
		if _, err := io.ReadFull(r, f.blob); err != nil {
			return frame{}, err
		}
	}
	return f, nil
}
