import { createWriteStream, type WriteStream } from 'node:fs';
import { once } from 'node:events';
import { TickwiseError } from '@tickwise/time';
import { reportMessages as msg } from './messages';

/**
 * A buffered text writer over a file stream that respects back-pressure:
 * text is gathered into ~1 MiB blocks and each block waits for the stream
 * to drain, so a big export streams in constant memory.
 */
export class TextSink {
  private readonly stream: WriteStream;
  private buffer: string[] = [];
  private size = 0;
  private failure: Error | null = null;
  /** Bytes handed to the stream so far (UTF-8). */
  bytes = 0;

  constructor(readonly path: string) {
    this.stream = createWriteStream(path, { encoding: 'utf8' });
    this.stream.on('error', (e) => { this.failure = e; });
  }

  /** Appends text; flushes when a block is full. */
  async write(text: string): Promise<void> {
    this.buffer.push(text);
    this.size += text.length;
    if (this.size >= 1 << 20) await this.flush();
  }

  /** Writes out the buffered text. */
  async flush(): Promise<void> {
    this.check();
    if (this.buffer.length === 0) return;
    const block = this.buffer.join('');
    this.buffer = [];
    this.size = 0;
    this.bytes += Buffer.byteLength(block);
    if (!this.stream.write(block)) await Promise.race([once(this.stream, 'drain'), once(this.stream, 'error')]);
    this.check();
  }

  /** Flushes and closes the file. */
  async close(): Promise<void> {
    await this.flush();
    this.stream.end();
    await Promise.race([once(this.stream, 'finish'), once(this.stream, 'error')]);
    this.check();
  }

  private check(): void {
    if (this.failure) throw new TickwiseError('cannot-write', msg.cannotWrite(this.path, this.failure.message), { cause: this.failure });
  }
}
