/**
 * Sidecar plans: render a template once per *shape* of its data, then fill each workload's own values in.
 *
 * Two workloads of the same shape differ only in values that the template copies into its output: names, label
 * values, container names, port numbers. A plan is the parsed output of one render in which every such value was
 * a *placeholder*; later workloads with the same key get that output with their values filled in, with no
 * render and no parse: the parts that hold a placeholder are fresh copies, the parts without one are the
 * plan's own, shared and deep-frozen (`share` of ../json.ts). The values side (tokens, placeholders,
 * recording, fill) is `./plan-values.ts`.
 *
 * How a render is recorded:
 * - Strings and 1–999 999 integers under the slot roots of a {@link PlanShape} that are "slot-safe"
 *   (`isSlotSafe`), and strings of such an integer's digits (`isDigitSlot`), become placeholder objects. A placeholder prints as a token and throws `NoPlan` on any other
 *   use: a property read, `in`, `Object.keys`, a prototype test, arithmetic. So a template or helper that looks
 *   at a value, rather than copying it, cannot silently see the token instead of the value.
 * - Functions run under their plan rules (Handlebars `./plan-helpers.ts`, Go `./go-plan-rules.ts`):
 *   functions that only copy or select text get tokens and give text with tokens; `trunc n` and `eq name
 *   "literal"` record what the plan assumes (length ≤ n, value ≠ literal); any other function given a
 *   placeholder, or a container holding placeholders, throws `NoPlan`.
 * - A `NoPlan` names the data paths it read. Those paths are *steered*: from then on their values are part of
 *   the key, not placeholders, so the plan for that key holds their real values. (The paths a template uses only
 *   as output text stay placeholders; the paths that steer control flow go into the key.)
 * - The render is done twice, with two token families; the plan is kept only when filling the first output
 *   with the second family's tokens gives the second output exactly.
 *
 * A plan is used only when it is provably the same as a render: every filled string that changed must read as
 * the same string in any YAML reader (so no filled scalar turns into a number or a boolean), the recorded
 * assumptions must hold, and filled keys must not collide. Otherwise the workload is rendered in full. With
 * verification on (`MESHINJECT_VERIFY_PLANS=1`, read by the CLI; on in the test suite), every planned result is
 * compared with a full render and a difference throws.
 */
import { defined } from '../checked.ts';
import type { Json } from '../model.ts';
import { getOrMake, setOwn } from '../json.ts';
import {
  DERIVED,
  FieldKinds,
  HAS_TOKEN,
  IDENTITY,
  KeyTrie,
  MAX_KEY_NODES,
  SLOT,
  literalKey,
  slotKey,
  steerAdd,
  type KeyNode,
} from './plan-keys.ts';
import {
  ANY_TOKEN,
  MAX_SLOTS,
  NoPlan,
  UNFAITHFUL,
  beginRecording,
  compileFill,
  endRecording,
  planText,
  plannedCopy,
  recordedLimits,
  type Filler,
  type Limits,
  type Slots,
  type Steer,
} from './plan-values.ts';
import { BudgetExceeded, chargeRun, measure, withoutRunCharge, type Cost } from './budget.ts';
import { runInForce } from './run-state.ts';

/**
 * Which parts of the template data a planner may turn into placeholders.
 * - `slotRoots`: top-level keys whose slot-safe strings become placeholders (deeply);
 * - `identityRoots`: top-level keys whose values are the same object for every workload of a run (values,
 *   mesh config): keyed by object identity, never walked;
 * - `derived`: see below;
 * - every other top-level key is keyed by its JSON text.
 */
export interface PlanShape {
  readonly slotRoots: readonly string[];
  readonly identityRoots: readonly string[];
  /**
   * Top-level fields computed from the slot roots alone: left out of the key, and rebuilt for a planned render
   * from the placeholder data (e.g. with `plannedJson` of `./plan-values.ts`); they may throw {@link NoPlan}.
   */
  readonly derived?: Readonly<Record<string, (planned: Record<string, unknown>) => unknown>>;
}

/** A recorded plan: the parsed output with tokens, and what it assumed about its slots' values. */
interface Plan {
  readonly output: Json;
  /** `output` compiled for filling (`compileFill` of ./plan-values.ts). */
  readonly filler: Filler;
  readonly limits: Limits;
  /** What the recording render cost (`./budget.ts`): charged to the run for each workload the plan serves. */
  readonly cost: Cost;
}

/**
 * Plan switches: `enabled` (default on; `MESHINJECT_PLANS=0` turns plans off) and `verify`
 * (`MESHINJECT_VERIFY_PLANS=1`); the CLI reads the environment and passes them in `RunOptions.plans`.
 */
export interface PlanSettings {
  enabled: boolean;
  verify: boolean;
  /**
   * Record a key's plan at its second workload, not its first: the first is rendered in full. Recording costs
   * two planned renders, which pay only when a key repeats; in a small input every workload often has a shape
   * of its own (a 10-workload list of distinct shapes: ~60 ms of CPU, a third of the CLI's start-up). The CLI
   * sets it; default off.
   */
  recordOnRepeat: boolean;
}

/** The plan switches of one run (`RunOptions.plans`): unset fields take the defaults (`createRenderRun` of ./run-state.ts). */
export interface RunPlanSettings extends Partial<PlanSettings> {
  /** Counters of this run's renders (`MESHINJECT_PLAN_STATS=1`: the CLI prints them), added to as it goes. */
  stats?: PlanStats;
}

/**
 * The plans of one run (a field of its `RenderRun`, ./run-state.ts): its switches, its counters, and each
 * planner's cache (plans, steering, hit rates) and the identity keys of its data, which live as long as the run.
 */
export interface PlanRun {
  /** The switches in force (`withoutPlans` turns `enabled` off while the reference path runs). */
  readonly settings: PlanSettings;
  /** The run's counters: `RunPlanSettings.stats` when it gave them, else the run's own. */
  readonly stats: PlanStats;
  /** Each planner's cache in this run, by the planner (`createPlanner`). */
  readonly caches: Map<Planner, PlanCache>;
  /** The key of each `PlanShape.identityRoots` object seen in this run (`identityKey`). */
  readonly identities: WeakMap<object, number>;
  nextIdentity: number;
}

/** The plans of the run in force; undefined outside a run (a planner used there renders in full). */
function planRun(): PlanRun | undefined {
  return runInForce()?.plans;
}

/**
 * Runs `f` with plans off (every render in full, nothing shared), inside the run in progress: the reference
 * path for a workload the planned path failed on (pipeline.ts `injectWorkload`). Other settings stay.
 */
export function withoutPlans<T>(f: () => T): T {
  const settings = planRun()?.settings;
  if (!settings) return f();
  const was = settings.enabled;
  settings.enabled = false;
  try {
    return f();
  } finally {
    settings.enabled = was;
  }
}

/**
 * Whether a workload that failed may be tried again without plans: plans are on (so parts of its result may
 * be shared, `compileFill` of ./plan-values.ts), and, when `verify` is true, whether plan verification is on (the
 * test suite's preload or `MESHINJECT_VERIFY_PLANS=1`: a difference is then a defect to report, not to hide).
 */
export function planSwitches(): { enabled: boolean; verify: boolean } {
  const settings = planRun()?.settings;
  return { enabled: settings?.enabled === true, verify: settings?.verify === true };
}

/** Adds one to counter `k` of the run in progress. */
function count(k: keyof PlanStats): void {
  const run = planRun();
  if (run) run.stats[k]++;
}

/**
 * Counters, for `npm run bench` (`MESHINJECT_PLAN_STATS=1` prints a run's): renders asked for, renders served by
 * a plan, plans recorded, full renders, lookups by key; a run's are `PlanRun.stats`.
 */
export interface PlanStats {
  lookups: number;
  hits: number;
  recorded: number;
  full: number;
  /** Lookups that built the data's key (all but those sparse lookups skip: `SPARSE_STRIDE`). */
  keyed: number;
}

/** Plans kept per planner before the cache starts over (a run of distinct shapes cannot grow memory without bound). */
const MAX_PLANS = 4096;
/**
 * Plans a planner records before it looks at its hit rate: once it has recorded this many and served fewer
 * hits than it recorded, it records no more (workloads whose shapes do not repeat are rendered in full).
 */
const RECORDING_TRIAL = 64;
/**
 * Sparse lookups. A key is as long as the pod's data, so a workload whose shape no plan serves pays the walk and
 * the text for nothing, and plans that serve few workloads cost more than they save (bench every-shape-different,
 * plans serving one workload in thirteen: looking up one in eight instead saved 2.7 % of the instructions). A
 * planner counts, per window of `DENSE_WINDOW` lookups, those a plan served; when fewer than one in
 * `SPARSE_STRIDE` were, it looks up only one workload in `SPARSE_STRIDE` and renders the others in full without
 * building their keys, until a plan serves at least two of a window of `SPARSE_STRIDE` such lookups (once a
 * shape starts repeating, every workload is looked up again within two such windows: 128 workloads).
 */
const DENSE_WINDOW = 64;
const SPARSE_STRIDE = 8;
/** Steering rounds for one key before the workload is rendered in full. */
const MAX_ROUNDS = 8;

/** One template source as a planner sees it. */
export interface PlanSource {
  /** The render, parsed: the truth (a fresh object each call). */
  render(data: Record<string, unknown>): Json;
  /** The same render with placeholder data, through the plan semantics of the helpers (`./plan-helpers.ts`). */
  renderPlanned(data: Record<string, unknown>): Json;
}

/** Renders through plans; see the module comment. */
export interface Planner {
  /**
   * The output of `source` (named `name`, one of the same source text each time) for `data`: the same JSON
   * as `source.render(data)`, a fresh object whose parts may be shared (deep-frozen: a caller changes a part
   * in place only after `owned` of ../json.ts).
   * @throws what `source.render` throws (a planned render never throws for the user: it falls back).
   */
  render(name: string, source: PlanSource, data: Record<string, unknown>): Json;
}

function identityKey(v: unknown, run: PlanRun): string {
  if (typeof v !== 'object' || v === null) return literalKey(v);
  let id = run.identities.get(v);
  if (id === undefined) {
    if (ANY_TOKEN.test(JSON.stringify(v))) throw HAS_TOKEN;
    id = run.nextIdentity++;
    run.identities.set(v, id);
  }
  return `#${id}`;
}

/**
 * A memo of plan sources: for each template object and name, `make` runs once and the plan name is `name#<n>`,
 * `n` unique per pair (two configs may give one name two templates, whose plans must not mix).
 */
export function planSources<T extends object>(
  make: (template: T, name: string) => PlanSource,
): (template: T, name: string) => { planName: string; source: PlanSource } {
  const byTemplate = new WeakMap<T, Map<string, { planName: string; source: PlanSource }>>();
  let next = 0;
  return (template, name) => {
    const byName = getOrMake(byTemplate, template, () => new Map());
    return getOrMake(byName, name, () => ({ planName: `${name}#${next++}`, source: make(template, name) }));
  };
}

/**
 * Creates a planner for data of `shape`. Its plans and steering are kept per template name in the run in force
 * (`PlanRun.caches`), so they live as long as the run; outside a run every render is in full.
 */
export function createPlanner(shape: PlanShape): Planner {
  const planner: Planner = {
    render(name, source, data) {
      const run = planRun();
      if (!run) return source.render(data);
      return getOrMake(run.caches, planner, () => new PlanCache(shape, run)).render(name, source, data);
    },
  };
  return planner;
}

/**
 * Each plan-filled output (its root collection) by the plan output it was filled from (see `filledFrom`).
 * Module state by design: a mark on each plan-filled output object (keyed by it), naming the plan output it was filled from.
 */
const FILLED = new WeakMap<object, Json>();

/**
 * The plan output (with its tokens, `holdsToken` of ./plan-values.ts) that `v` was filled from, when `v` is
 * the root of a planned render's result as the planner returned it; undefined for a full render. A driver
 * proves a property of every fill once, on the plan's output (e.g. `fillsTrust` of
 * ../patch/trusted-patch.ts), instead of once per workload.
 */
export function filledFrom(v: unknown): Json | undefined {
  return typeof v === 'object' && v !== null ? FILLED.get(v) : undefined;
}

/**
 * Length limits hold and filled text reads the same: the filled copy, its render's cost charged to the run;
 * otherwise undefined (render in full).
 */
function fromPlan(plan: Plan, values: readonly string[]): Json | undefined {
  // A limit names the slot of a placeholder, and every workload of a plan's key has the same slots.
  for (const [slot, n] of plan.limits.maxLen) if (defined(values[slot], 'a limited slot').length > n) return undefined;
  for (const [slot, set] of plan.limits.notIn) if (set.has(defined(values[slot], 'a limited slot'))) return undefined;
  let out: Json;
  try {
    out = plan.filler(values);
  } catch (e) {
    if (e === UNFAITHFUL) return undefined;
    throw e;
  }
  chargeRun(plan.cost);
  if (typeof out === 'object' && out !== null) FILLED.set(out, plan.output);
  return out;
}

/** The planner of one data shape in one run (see `createPlanner`). */
export class PlanCache implements Planner {
  /** The keys of this planner's data (`keyOf`): a key is a node of this trie. */
  private keys = new KeyTrie();
  private readonly plans = new Map<KeyNode, Plan | null>();
  /** Keys seen once and rendered in full, not recorded yet (`recordOnRepeat`). */
  private readonly seen = new Set<KeyNode>();
  private readonly steering = new Map<string, Steer>();
  private readonly slotRoots: ReadonlySet<string>;
  private readonly derived: ReadonlyArray<[string, (planned: Record<string, unknown>) => unknown]>;
  private readonly fieldKinds: FieldKinds;
  private hits = 0;
  private recorded = 0;
  /** Looking up one workload in `SPARSE_STRIDE` (see `DENSE_WINDOW`). */
  private sparse = false;
  /** Workloads left to render in full, unlooked-up, before the next sparse lookup. */
  private skipping = 0;
  /** Lookups in the current window, and those a plan served (a plan found, or recorded and used at once). */
  private windowLookups = 0;
  private windowUseful = 0;

  constructor(
    shape: PlanShape,
    private readonly run: PlanRun,
  ) {
    this.slotRoots = new Set(shape.slotRoots);
    this.derived = Object.entries(shape.derived ?? {});
    this.fieldKinds = new FieldKinds(shape.slotRoots, shape.identityRoots, Object.keys(shape.derived ?? {}));
  }

  render(name: string, source: PlanSource, data: Record<string, unknown>): Json {
    count('lookups');
    if (!this.run.settings.enabled) return source.render(data);
    let out: Json | undefined;
    try {
      out = this.planned(name, source, data);
    } catch (e) {
      if (e instanceof BudgetExceeded)
        throw new BudgetExceeded(`template "${name.replace(/#\d+$/, '')}": ${e.message}`);
      throw e;
    }
    if (out === undefined) {
      count('full');
      return source.render(data);
    }
    if (this.run.settings.verify) {
      const truth = JSON.stringify(withoutRunCharge(() => source.render(data)));
      const got = JSON.stringify(out);
      if (truth !== got)
        throw new Error(`plan verification failed for template "${name}":\n rendered ${truth}\n planned  ${got}`);
    }
    return out;
  }

  /**
   * The key of `data`: the template name, then each top-level field (see `PlanShape`), as a node of `keys` (the
   * pieces that were joined into a key text, `./plan-keys.ts`); slot values go to `values`.
   */
  private keyOf(name: string, data: Record<string, unknown>, steer: Steer, values: string[]): KeyNode {
    let at = this.keys.root.step(name).step('\u0002');
    const fields = Object.keys(data);
    const kinds = this.fieldKinds.of(fields);
    for (let i = 0; i < fields.length; i++) {
      const kind = kinds[i];
      if (kind === DERIVED) continue;
      const k = defined(fields[i], 'a field of the data');
      const v = data[k];
      at = at.step(k).step('=');
      if (kind === SLOT) at = slotKey(v, steer.kids.get(k), values, at);
      else if (kind === IDENTITY) at = at.step(identityKey(v, this.run));
      else at = at.step(literalKey(v));
      at = at.step(';');
    }
    return at;
  }

  /** The planned output for `data`, or undefined when it must be rendered in full. */
  private planned(name: string, source: PlanSource, data: Record<string, unknown>): Json | undefined {
    if (this.skipping > 0) {
      this.skipping--;
      return undefined;
    }
    if (this.sparse) this.skipping = SPARSE_STRIDE - 1;
    const out = this.lookUp(name, source, data);
    this.windowLookups++;
    if (out !== undefined) this.windowUseful++;
    if (this.windowLookups === (this.sparse ? SPARSE_STRIDE : DENSE_WINDOW)) {
      this.sparse = this.sparse ? this.windowUseful < 2 : this.windowUseful * SPARSE_STRIDE < DENSE_WINDOW;
      this.windowLookups = 0;
      this.windowUseful = 0;
    }
    return out;
  }

  /** The planned output for `data` by its key (recording a plan where that pays), or undefined. */
  private lookUp(name: string, source: PlanSource, data: Record<string, unknown>): Json | undefined {
    count('keyed');
    const steer = getOrMake(this.steering, name, () => ({ kids: new Map() }));
    if (this.keys.size >= MAX_KEY_NODES) {
      // Old keys are unreachable in a new trie: their plans go with them.
      this.keys = new KeyTrie();
      this.plans.clear();
      this.seen.clear();
    }
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const values: string[] = [];
      let key: KeyNode;
      try {
        key = this.keyOf(name, data, steer, values);
      } catch (e) {
        if (e === HAS_TOKEN) return undefined;
        throw e;
      }
      const plan = this.plans.get(key);
      if (plan === undefined) {
        // Shapes that never repeat (every workload different) would pay for recording and gain nothing.
        if (this.recorded >= RECORDING_TRIAL && this.hits < this.recorded) return undefined;
        if (round === 0 && this.run.settings.recordOnRepeat && !this.seen.has(key)) {
          if (this.seen.size >= MAX_PLANS) this.seen.clear();
          this.seen.add(key);
          return undefined;
        }
        const r = this.record(source, data, steer);
        if (r instanceof NoPlan && r.paths.length > 0) {
          for (const p of r.paths) steerAdd(steer, p);
          continue;
        }
        return this.keep(key, r instanceof NoPlan ? null : r, values);
      }
      const out = plan ? fromPlan(plan, values) : undefined;
      if (out !== undefined) {
        count('hits');
        this.hits++;
      }
      return out;
    }
    return undefined;
  }

  /** Caches the plan (or null: none for this key) and gives this workload's output from it. */
  private keep(key: KeyNode, plan: Plan | null, values: readonly string[]): Json | undefined {
    if (this.plans.size >= MAX_PLANS) this.plans.clear();
    this.plans.set(key, plan);
    if (!plan) return undefined;
    count('recorded');
    this.recorded++;
    return fromPlan(plan, values);
  }

  /**
   * Records the plan of a key: renders with family-0 tokens, and again with family-1 tokens; the plan is kept
   * only when filling the first output with the second family's tokens gives the second output exactly (a
   * template that computes with a token, rather than copying it, fails this). Returns the NoPlan of a render
   * that used a placeholder, or null when no plan can be kept for this key.
   */
  private record(source: PlanSource, data: Record<string, unknown>, steer: Steer): Plan | NoPlan | null {
    try {
      // Bookkeeping: these renders count against the render budget only; the run is charged per use (`fromPlan`).
      const { value: a, cost } = withoutRunCharge(() => measure(() => this.renderFamily(source, data, steer, 0)));
      const b = withoutRunCharge(() => this.renderFamily(source, data, steer, 1));
      const plan: Plan = { output: a.output, filler: compileFill(a.output), limits: a.limits, cost };
      // The second family's tokens stand in for values; length limits are about real values, so not checked here.
      return JSON.stringify(plan.filler(b.tokens)) === JSON.stringify(b.output) ? plan : null;
    } catch (e) {
      if (e instanceof NoPlan) return e;
      return null;
    }
  }

  /** One planned render with tokens of `family`: its parsed output, length limits and the slots' token texts. */
  private renderFamily(source: PlanSource, data: Record<string, unknown>, steer: Steer, family: 0 | 1) {
    const slots: Slots = { list: [], byToken: new Map(), family };
    const outer = beginRecording(slots.byToken);
    try {
      const planned: Record<string, unknown> = {};
      for (const k of Object.keys(data)) {
        setOwn(planned, k, this.slotRoots.has(k) ? plannedCopy(data[k], steer.kids.get(k), [k], slots) : data[k]);
      }
      for (const [k, derive] of this.derived) planned[k] = derive(planned);
      if (slots.list.length > MAX_SLOTS) throw new NoPlan([], 'too many slots');
      const output = source.renderPlanned(planned);
      return {
        output,
        limits: recordedLimits(),
        tokens: slots.list.map((p) => defined(planText(p), 'the plan text of a placeholder').text),
      };
    } finally {
      endRecording(outer);
    }
  }
}
