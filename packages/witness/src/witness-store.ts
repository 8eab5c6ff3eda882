/**
 * What a witness keeps per log (the spec requires only the latest checkpoint it verified): the size and
 * root it cosigned, the log key it pinned, and that checkpoint with its cosignature, for monitors. The
 * file store writes the whole state to a temporary file and renames it over the old one, so a crash leaves
 * either the old state or the new one, never half of each; the witness persists before it answers.
 */
import fs from 'node:fs/promises';

export interface WitnessState {
  size: number;
  /** base64 of the 32-byte root */
  root: string;
  /** the log's verifier key pinned on first contact (null: a statically configured log) */
  vkey: string | null;
  /** the latest cosigned checkpoint: the log's note with this witness's cosignature line */
  checkpoint: string;
}

export interface WitnessStore {
  get(origin: string): Promise<WitnessState | undefined>;
  put(origin: string, state: WitnessState): Promise<void>;
  origins(): Promise<string[]>;
}

export class MemoryWitnessStore implements WitnessStore {
  private readonly m = new Map<string, WitnessState>();
  async get(origin: string) {
    return this.m.get(origin);
  }
  async put(origin: string, state: WitnessState) {
    this.m.set(origin, state);
  }
  async origins() {
    return [...this.m.keys()];
  }
}

export class FileWitnessStore implements WitnessStore {
  private state: Record<string, WitnessState> | undefined;
  private writing: Promise<void> = Promise.resolve();

  constructor(private readonly file: string) {}

  private async load(): Promise<Record<string, WitnessState>> {
    if (!this.state) {
      try {
        this.state = JSON.parse(await fs.readFile(this.file, 'utf8')) as Record<string, WitnessState>;
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
        this.state = {};
      }
    }
    return this.state;
  }

  async get(origin: string) {
    return (await this.load())[origin];
  }

  async origins() {
    return Object.keys(await this.load());
  }

  async put(origin: string, s: WitnessState) {
    // one write at a time, each from the state the previous one left (puts of other origins are kept)
    const write = async () => {
      const all = { ...(await this.load()), [origin]: s };
      const tmp = `${this.file}.${process.pid}.tmp`;
      await fs.writeFile(tmp, JSON.stringify(all));
      await fs.rename(tmp, this.file);
      this.state = all;
    };
    this.writing = this.writing.then(write, write);
    await this.writing;
  }
}
