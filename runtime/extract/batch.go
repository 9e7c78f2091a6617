package extract

// Batch holds copies of records, in chunks of memory that never move or
// grow, so that the batch takes the memory of its records and no more.
type Batch struct {
	Records [][]byte
	Size    int      // bytes of the records
	chunks  [][]byte // kept for the next batch
	used    int      // chunks in use
}

const chunkSize = 1 << 20

// Add copies records into the batch.
func (b *Batch) Add(records [][]byte) {
	for _, r := range records {
		if b.used == 0 || cap(b.chunks[b.used-1])-len(b.chunks[b.used-1]) < len(r) {
			if b.used == len(b.chunks) {
				b.chunks = append(b.chunks, make([]byte, 0, max(chunkSize, len(r))))
			} else if cap(b.chunks[b.used]) < len(r) {
				b.chunks[b.used] = make([]byte, 0, len(r))
			}
			b.used++
		}
		c := b.chunks[b.used-1]
		start := len(c)
		c = append(c, r...)
		b.chunks[b.used-1] = c
		b.Records = append(b.Records, c[start:len(c):len(c)])
		b.Size += len(r)
	}
}

// Reset empties the batch, keeping its memory for the next records.
func (b *Batch) Reset() {
	clear(b.Records)
	b.Records = b.Records[:0]
	for i := range b.chunks[:b.used] {
		b.chunks[i] = b.chunks[i][:0]
	}
	b.used, b.Size = 0, 0
}
