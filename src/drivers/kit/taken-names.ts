/**
 * Names a mesh's injection adds that a pod template holds already, without the injection's mark: the driver kit's
 * refusal. A container, init container or volume named like one the injection adds, in a pod that carries no
 * mark of that injection (the annotation it writes), is the user's own, or was added by hand or by the mesh's
 * webhook without it. Injecting would merge into it or add a second of the name, and uninject would remove it:
 * the user's container lost without a word (found by fuzzing, session 51: a user's `kuma-sidecar` replaced by
 * Kuma's, a `kuma-init` beside Kuma's). OSM's and FSM's drivers refused so before; Kuma's now does too. (Linkerd's
 * keeps `linkerd inject`'s rule, which removes Linkerd's names silently before injecting: src/drivers/linkerd.)
 */
import { isJsonObject } from '../../json.ts';
import type { JsonObject, PodTemplate } from '../../model.ts';
import { InjectError } from '../../results/errors.ts';
import { quoteData } from '../../results/quote.ts';

/** The names an injection adds, by pod-spec list. */
export interface InjectedNames {
  containers?: readonly string[];
  initContainers?: readonly string[];
  volumes?: readonly string[];
}

/**
 * Refuses `pod` when one of its lists holds an entry named as in `names` (checked in the order containers, init
 * containers, volumes; the first found is named). Call it only for a pod without the mark (`marker`), or once a
 * previous injection the mark vouches for is removed.
 * @param marker the annotation the injection writes (named in the message)
 * @param mesh the mesh's name as its users know it (`Kuma`), named in the message
 * @throws InjectError naming the field (`spec.containers`, `spec.initContainers`, `spec.volumes`)
 */
export function refuseTakenNames(pod: PodTemplate, names: InjectedNames, marker: string, mesh: string): void {
  for (const field of ['containers', 'initContainers', 'volumes'] as const) {
    const wanted = names[field] ?? [];
    const entries = pod.spec[field];
    const taken = (Array.isArray(entries) ? entries : []).find(
      (c): c is JsonObject => isJsonObject(c) && typeof c.name === 'string' && wanted.includes(c.name),
    );
    if (taken) {
      throw new InjectError(
        `spec.${field} already has ${quoteData(taken.name)} and there is no ${marker} annotation: injected by ${mesh}'s webhook or by hand; remove it before injecting`,
        { field: `spec.${field}` },
      );
    }
  }
}
