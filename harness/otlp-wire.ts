/**
 * OTLP protobuf bodies written byte by byte, for the hostile exports of the tests and benchmarks
 * (issue 50): shapes no SDK would make, cheaper to write than to build through protobufjs.
 */

/** A length-delimited protobuf field: tag, varint length, payload. */
export function field(number: number, payload: Buffer): Buffer {
  const head = [(number << 3) | 2];
  let length = payload.length;
  while (length > 127) {
    head.push((length & 127) | 128);
    length >>>= 7;
  }
  head.push(length);
  return Buffer.concat([Buffer.from(head), payload]);
}

/** The security review's export: an ExportLogsServiceRequest of `n` empty log records, two bytes each. */
export function emptyLogRecords(n: number): Buffer {
  const records = Buffer.alloc(n * 2);
  for (let i = 0; i < n; i++) records[2 * i] = (2 << 3) | 2; // LogRecord, length 0
  return field(1, field(2, records));
}
