/** The set of benchmark cases a run can choose from; cases are added in one place (cases/index.ts). */
import type { BenchCase, Params } from "./types.ts";

export class CaseRegistry {
  private readonly cases = new Map<string, BenchCase>();

  register<P extends Params>(c: BenchCase<P>): this {
    if (!/^[a-z][a-z0-9-]*$/.test(c.name)) throw new Error(`bench case name "${c.name}" must be kebab-case`);
    if (this.cases.has(c.name)) throw new Error(`bench case "${c.name}" is registered twice`);
    this.cases.set(c.name, c as unknown as BenchCase);
    return this;
  }

  get(name: string): BenchCase {
    const c = this.cases.get(name);
    if (!c) throw new Error(`no bench case "${name}"; cases: ${[...this.cases.keys()].join(", ")}`);
    return c;
  }

  has(name: string): boolean {
    return this.cases.has(name);
  }

  /** In registration order, which is also the run order. */
  list(): BenchCase[] {
    return [...this.cases.values()];
  }
}
