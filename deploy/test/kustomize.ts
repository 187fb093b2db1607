import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parseAllDocuments } from 'yaml';

/**
 * Enough of kustomize to resolve this repository's overlays offline, so the test suite can check what
 * `kubectl apply -k` would receive: resources (files and directories), namespace, images, replicas,
 * common labels and strategic-merge patches (lists of named items merge by name).
 */
export type KubernetesObject = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  [field: string]: unknown;
};

type Kustomization = {
  namespace?: string;
  resources?: string[];
  images?: { name: string; newName?: string; newTag?: string; digest?: string }[];
  replicas?: { name: string; count: number }[];
  labels?: { pairs: Record<string, string> }[];
  patches?: { path: string }[];
};

export function readYamlDocuments(path: string): KubernetesObject[] {
  return parseAllDocuments(readFileSync(path, 'utf8'))
    .map((document) => {
      if (document.errors.length > 0) throw new Error(`${path}: ${document.errors[0]?.message}`);
      return document.toJS() as KubernetesObject | null;
    })
    .filter((object): object is KubernetesObject => object !== null);
}

function mergePatch(target: unknown, patch: unknown): unknown {
  if (Array.isArray(target) && Array.isArray(patch)) {
    const named = patch.every((item) => typeof item === 'object' && item !== null && 'name' in item);
    if (!named) return patch;
    const merged = [...target];
    for (const item of patch as { name: string }[]) {
      const index = merged.findIndex((existing) => (existing as { name?: string }).name === item.name);
      if (index >= 0) merged[index] = mergePatch(merged[index], item);
      else merged.push(item);
    }
    return merged;
  }
  if (typeof target === 'object' && target !== null && typeof patch === 'object' && patch !== null && !Array.isArray(patch)) {
    const merged: Record<string, unknown> = { ...(target as Record<string, unknown>) };
    for (const [key, value] of Object.entries(patch)) merged[key] = mergePatch(merged[key], value);
    return merged;
  }
  return patch;
}

export function build(directory: string): KubernetesObject[] {
  const kustomization = readYamlDocuments(join(directory, 'kustomization.yaml'))[0] as unknown as Kustomization;
  let objects: KubernetesObject[] = [];
  for (const resource of kustomization.resources ?? []) {
    const path = join(directory, resource);
    if (!existsSync(path)) throw new Error(`${directory}: resource ${resource} does not exist`);
    objects.push(...(statSync(path).isDirectory() ? build(path) : readYamlDocuments(path)));
  }
  for (const { path } of kustomization.patches ?? []) {
    for (const patch of readYamlDocuments(join(directory, path))) {
      const index = objects.findIndex((object) => object.kind === patch.kind && object.metadata.name === patch.metadata.name);
      if (index < 0) throw new Error(`${directory}/${path}: no ${patch.kind} ${patch.metadata.name} to patch`);
      objects[index] = mergePatch(objects[index], patch) as KubernetesObject;
    }
  }
  for (const { name, count } of kustomization.replicas ?? []) {
    const target = objects.find((object) => object.kind === 'Deployment' && object.metadata.name === name);
    if (!target) throw new Error(`${directory}: replicas for unknown Deployment ${name}`);
    (target.spec as { replicas: number }).replicas = count;
  }
  objects = objects.map((object) => {
    let text = JSON.stringify(object);
    for (const image of kustomization.images ?? []) {
      const reference = image.digest
        ? `${image.newName ?? image.name}@${image.digest}`
        : `${image.newName ?? image.name}:${image.newTag ?? 'latest'}`;
      text = text.replace(new RegExp(`"image":"${image.name}(:[^"]*)?"`, 'g'), `"image":"${reference}"`);
    }
    const result = JSON.parse(text) as KubernetesObject;
    if (kustomization.namespace && result.kind !== 'Namespace') result.metadata.namespace = kustomization.namespace;
    for (const { pairs } of kustomization.labels ?? []) result.metadata.labels = { ...result.metadata.labels, ...pairs };
    return result;
  });
  return objects;
}

export const overlayRoot = (name: string) => join(dirname(__dirname), 'kubernetes', 'overlays', name);
