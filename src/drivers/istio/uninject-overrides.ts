/**
 * The user's containers in Istio's uninject (the `uninject` hook, ./uninject.ts): put back from
 * `proxy.istio.io/overrides` (Istio `reapplyOverwrittenContainers` undone), and the proof that each app container
 * a template patched is what injecting its recorded original gives.
 */
import type { Json, JsonObject, PodTemplate } from '../../model.ts';
import type { UninjectContext } from '../../contract/driver.ts';
import { InjectError } from '../../results/errors.ts';
import { isJsonObject, jsonEqual, withoutNulls } from '../../json.ts';
import { AUTO_IMAGE, OVERRIDES_ANNOTATION, parseOverrides } from './overrides.ts';
import { STATUS_ANNOTATION } from './status.ts';
import { containersOf, findContainer, PROXY_CONTAINER } from './pod-fields.ts';

/**
 * A container as Go's typed decoding tells it apart from another: a field with no value is the field absent (the
 * recorded original, Go's `json.Marshal`, holds none), and `resources` (a struct, not a pointer) is `{}` when
 * absent.
 */
function asGoReads(c: JsonObject): Json {
  const out = { ...(withoutNulls(c) as JsonObject) }; // (a shared container without nulls is itself: copied)
  if (isJsonObject(out.resources) && Object.keys(out.resources).length === 0) delete out.resources;
  return out;
}

/**
 * Proof for each app container the template patched: the restored original, injected again (`again`), is
 * the container as injected in `ctx.injected`.
 * @throws InjectError naming the status annotation when one is not
 */
export function checkPatchedContainers(
  patched: ReadonlyArray<{ list: 'containers' | 'initContainers'; name: string }>,
  again: PodTemplate,
  ctx: UninjectContext,
): void {
  for (const { list, name } of patched) {
    const want = findContainer(name, containersOf(ctx.injected.spec, list));
    const got = findContainer(name, containersOf(again.spec, list));
    if (!jsonEqual(got && asGoReads(got), want && asGoReads(want))) {
      throw new InjectError(
        `cannot uninject faithfully: ${STATUS_ANNOTATION} lists ${list === 'containers' ? 'container' : 'init container'} "${name}" as injected, and injecting the original that ${OVERRIDES_ANNOTATION} records does not give it back`,
        { field: `metadata.annotations[${STATUS_ANNOTATION}]` },
      );
    }
  }
}

/**
 * Puts back the user's containers that the injection overwrote, as `proxy.istio.io/overrides` recorded them
 * (Istio `reapplyOverwrittenContainers`): containers named like injected ones (`istio-proxy`, `istio-init`)
 * and app containers a template patched (grpc-simple, grpc-agent). Each goes back to its place among the
 * remaining entries of its list in `injected` (else to the end), without the `resources: {}` Go's encoding
 * adds unless the injected container has exactly that. The record does not keep `image: auto` (Istio drops it
 * before saving; absent and `auto` both mean "the injected image" to Istio): a container without an image gets
 * `image: auto`, the documented spelling. Nor does it keep which list a customised proxy of a native sidecar
 * was in: it goes back to `containers`, where Istio documents the customisation (Istio moves it to the init
 * containers itself). A container of the same name still present is left alone.
 */
export function restoreOverrides(pod: PodTemplate, record: string | undefined, injected: PodTemplate): void {
  const saved = parseOverrides(record);
  for (const list of ['containers', 'initContainers'] as const) {
    for (const c of saved[list]) {
      const to = list === 'initContainers' && c.name === PROXY_CONTAINER ? 'containers' : list;
      const cur = containersOf(pod.spec, to);
      if (typeof c.name !== 'string' || findContainer(c.name, cur)) continue;
      const before = containersOf(injected.spec, to).map((x) => x.name);
      const was = to === list ? before.indexOf(c.name) : -1;
      const copy = { ...c };
      const injectedResources = was < 0 ? undefined : containersOf(injected.spec, to)[was]?.resources;
      const emptyInjected = isJsonObject(injectedResources) && Object.keys(injectedResources).length === 0;
      if (isJsonObject(copy.resources) && Object.keys(copy.resources).length === 0 && !emptyInjected)
        delete copy.resources;
      if (copy.image === undefined) copy.image = AUTO_IMAGE;
      // Its place: after the remaining entries that came before it in the injected list.
      const at =
        was < 0
          ? cur.length
          : cur.filter((x) => {
              const i = before.indexOf(x.name);
              return i >= 0 && i < was;
            }).length;
      pod.spec[to] = [...cur.slice(0, at), copy, ...cur.slice(at)];
    }
  }
}
