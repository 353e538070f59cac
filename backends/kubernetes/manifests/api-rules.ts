// The API server's own checks that the OpenAPI schema does not carry: a
// manifest can match every type in the schema and still be refused with 422
// (a podFailurePolicy beside restartPolicy OnFailure, a label value with a
// "/", a deadline of 0). These are the rules of the objects agent-runner
// builds, as the API server applies them; the builders' tests and the fake
// API server both run them. Each problem names the field's path. Pure.
import { LABEL_VALUE, LABEL_VALUE_MAX } from '../labels.js';

type Json = Record<string, unknown>;

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const QUALIFIED_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const SECRET_KEY = /^[-._a-zA-Z0-9]+$/;
const BASE64 = /^([A-Za-z0-9+/]{4})*([A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const QUANTITY = /^[+]?(\d+(\.\d*)?|\.\d+)(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei|[eE][-+]?\d+)?$/;
const IPV4_CIDR = /^((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\/(3[0-2]|[12]?\d)$/;
const IPV6_CIDR = /^[0-9a-fA-F:]*:[0-9a-fA-F:.]*\/(12[0-8]|1[01]\d|[1-9]?\d)$/;

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const objectAt = (value: unknown): Json => (isObject(value) ? value : {});
const listAt = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);

/** Problems are collected into one list; `at` is the field's path, as the API server's messages name it. */
type Report = (at: string, problem: string) => void;

function labelProblems(labels: unknown, at: string, report: Report): void {
  for (const [key, value] of Object.entries(objectAt(labels))) {
    const slash = key.lastIndexOf('/');
    const prefix = slash < 0 ? undefined : key.slice(0, slash);
    const name = slash < 0 ? key : key.slice(slash + 1);
    if ((prefix !== undefined && !DNS_SUBDOMAIN.test(prefix)) || name.length > 63 || !QUALIFIED_NAME.test(name))
      report(`${at}[${key}]`, 'is not a qualified label key');
    if (typeof value !== 'string' || value.length > LABEL_VALUE_MAX || !LABEL_VALUE.test(value))
      report(`${at}[${key}]`, `value ${JSON.stringify(value)} is not a label value`);
  }
}

function metadataProblems(object: Json, nameRule: RegExp, report: Report): void {
  const metadata = objectAt(object.metadata);
  if (typeof metadata.name !== 'string' || !nameRule.test(metadata.name) || metadata.name.length > 253)
    report('metadata.name', `${JSON.stringify(metadata.name)} is not a valid name`);
  if (
    metadata.namespace !== undefined &&
    (typeof metadata.namespace !== 'string' || !DNS_LABEL.test(metadata.namespace))
  )
    report('metadata.namespace', `${JSON.stringify(metadata.namespace)} is not a DNS-1123 label`);
  labelProblems(metadata.labels, 'metadata.labels', report);
}

function quantityProblem(value: unknown, at: string, report: Report): void {
  if (typeof value !== 'string' || !QUANTITY.test(value) || /^[+]?0*(\.0*)?[a-zA-Z]*$/.test(value))
    report(at, `${JSON.stringify(value)} is not a positive quantity`);
}

function containerProblems(container: Json, at: string, volumes: ReadonlySet<string>, report: Report): void {
  if (typeof container.name !== 'string' || !DNS_LABEL.test(container.name) || container.name.length > 63)
    report(`${at}.name`, `${JSON.stringify(container.name)} is not a DNS-1123 label`);
  if (typeof container.image !== 'string' || container.image === '') report(`${at}.image`, 'is required');
  for (const [i, env] of listAt(container.env).entries()) {
    const entry = objectAt(env);
    if (typeof entry.name !== 'string' || entry.name === '' || entry.name.includes('='))
      report(`${at}.env[${i}].name`, `${JSON.stringify(entry.name)} is not a variable name`);
    if (entry.value !== undefined && entry.valueFrom !== undefined)
      report(`${at}.env[${i}]`, 'may not have both value and valueFrom');
    const ref = objectAt(objectAt(entry.valueFrom).secretKeyRef);
    if (entry.valueFrom !== undefined && (typeof ref.name !== 'string' || typeof ref.key !== 'string'))
      report(`${at}.env[${i}].valueFrom.secretKeyRef`, 'needs name and key');
  }
  for (const [i, mount] of listAt(container.volumeMounts).entries()) {
    const name = objectAt(mount).name;
    if (typeof name !== 'string' || !volumes.has(name))
      report(`${at}.volumeMounts[${i}].name`, `${JSON.stringify(name)} is not a volume of the pod`);
  }
  const resources = objectAt(container.resources);
  const requests = objectAt(resources.requests);
  const limits = objectAt(resources.limits);
  for (const [kind, values] of [
    ['requests', requests],
    ['limits', limits],
  ] as const)
    for (const [resource, value] of Object.entries(values))
      quantityProblem(value, `${at}.resources.${kind}.${resource}`, report);
  if (typeof requests.memory === 'string' && typeof limits.memory === 'string' && requests.memory !== limits.memory)
    report(
      `${at}.resources.requests.memory`,
      'differs from the limit (the builders keep them equal, Guaranteed memory)',
    );
}

function podFailurePolicyProblems(job: Json, containers: ReadonlySet<string>, report: Report): void {
  const spec = objectAt(job.spec);
  if (spec.podFailurePolicy === undefined) return;
  const podSpec = objectAt(objectAt(spec.template).spec);
  if (podSpec.restartPolicy !== 'Never')
    report('spec.template.spec.restartPolicy', 'must be Never when podFailurePolicy is set');
  if (spec.podReplacementPolicy !== undefined && spec.podReplacementPolicy !== 'Failed')
    report('spec.podReplacementPolicy', 'must be Failed when podFailurePolicy is set');
  const rules = listAt(objectAt(spec.podFailurePolicy).rules);
  if (rules.length > 20) report('spec.podFailurePolicy.rules', 'has more than 20 rules');
  for (const [i, raw] of rules.entries()) {
    const rule = objectAt(raw);
    const at = `spec.podFailurePolicy.rules[${i}]`;
    if (!['FailJob', 'FailIndex', 'Ignore', 'Count'].includes(String(rule.action)))
      report(`${at}.action`, `${JSON.stringify(rule.action)} is not FailJob, FailIndex, Ignore or Count`);
    if ((rule.onExitCodes === undefined) === (rule.onPodConditions === undefined))
      report(at, 'needs exactly one of onExitCodes and onPodConditions');
    if (rule.onExitCodes !== undefined) {
      const codes = objectAt(rule.onExitCodes);
      const values = listAt(codes.values);
      if (codes.containerName !== undefined && !containers.has(String(codes.containerName)))
        report(
          `${at}.onExitCodes.containerName`,
          `${JSON.stringify(codes.containerName)} is not a container of the pod`,
        );
      if (codes.operator !== 'In' && codes.operator !== 'NotIn')
        report(`${at}.onExitCodes.operator`, 'must be In or NotIn');
      if (values.length === 0 || values.length > 255) report(`${at}.onExitCodes.values`, 'needs 1-255 values');
      if (
        values.some((value, k) => !Number.isInteger(value) || (k > 0 && (value as number) <= (values[k - 1] as number)))
      )
        report(`${at}.onExitCodes.values`, 'must be whole numbers in increasing order, each once');
      if (codes.operator === 'In' && values.includes(0)) report(`${at}.onExitCodes.values`, 'may not hold 0 with In');
    }
    for (const [k, condition] of listAt(rule.onPodConditions).entries()) {
      const entry = objectAt(condition);
      if (typeof entry.type !== 'string' || entry.type === '')
        report(`${at}.onPodConditions[${k}].type`, 'is required');
      if (!['True', 'False', 'Unknown'].includes(String(entry.status)))
        report(`${at}.onPodConditions[${k}].status`, 'must be True, False or Unknown');
    }
  }
}

function jobProblems(job: Json, report: Report): void {
  metadataProblems(job, DNS_LABEL, report);
  const name = objectAt(job.metadata).name;
  if (typeof name === 'string' && name.length > 63) report('metadata.name', 'is longer than 63 characters');
  const spec = objectAt(job.spec);
  const positive = (key: string, min: number) => {
    const value = spec[key];
    // A value that is not a number at all is the schema's to report.
    if (typeof value === 'number' && (!Number.isInteger(value) || value < min))
      report(`spec.${key}`, `must be a whole number of at least ${min}, got ${JSON.stringify(value)}`);
  };
  positive('activeDeadlineSeconds', 1);
  positive('backoffLimit', 0);
  positive('ttlSecondsAfterFinished', 0);
  const template = objectAt(spec.template);
  labelProblems(objectAt(template.metadata).labels, 'spec.template.metadata.labels', report);
  const podSpec = objectAt(template.spec);
  if (podSpec.restartPolicy !== 'Never' && podSpec.restartPolicy !== 'OnFailure')
    report('spec.template.spec.restartPolicy', 'must be Never or OnFailure in a Job');
  const volumes = new Set<string>();
  for (const [i, volume] of listAt(podSpec.volumes).entries()) {
    const entry = objectAt(volume);
    const volumeName = String(entry.name);
    if (!DNS_LABEL.test(volumeName) || volumes.has(volumeName))
      report(`spec.template.spec.volumes[${i}].name`, `${JSON.stringify(entry.name)} is not a name of its own`);
    volumes.add(volumeName);
    const sizeLimit = objectAt(entry.emptyDir).sizeLimit;
    if (sizeLimit !== undefined)
      quantityProblem(sizeLimit, `spec.template.spec.volumes[${i}].emptyDir.sizeLimit`, report);
  }
  const containers = new Set<string>();
  for (const field of ['initContainers', 'containers'] as const)
    for (const [i, container] of listAt(podSpec[field]).entries()) {
      const entry = objectAt(container);
      const containerName = String(entry.name);
      if (containers.has(containerName))
        report(`spec.template.spec.${field}[${i}].name`, `${JSON.stringify(containerName)} is used twice`);
      containers.add(containerName);
      containerProblems(entry, `spec.template.spec.${field}[${i}]`, volumes, report);
    }
  if (listAt(podSpec.containers).length === 0) report('spec.template.spec.containers', 'needs at least one container');
  podFailurePolicyProblems(job, containers, report);
}

function secretProblems(secret: Json, report: Report): void {
  metadataProblems(secret, DNS_SUBDOMAIN, report);
  let bytes = 0;
  for (const [key, value] of Object.entries(objectAt(secret.data))) {
    if (!SECRET_KEY.test(key) || key.length > 253) report(`data[${key}]`, 'is not a valid Secret key');
    if (typeof value !== 'string' || !BASE64.test(value)) report(`data[${key}]`, 'is not base64');
    else bytes += Buffer.from(value, 'base64').length;
  }
  if (bytes > 1024 * 1024) report('data', `holds ${bytes} bytes; a Secret holds at most 1048576`);
}

function networkPolicyProblems(policy: Json, report: Report): void {
  metadataProblems(policy, DNS_SUBDOMAIN, report);
  const spec = objectAt(policy.spec);
  labelProblems(objectAt(spec.podSelector).matchLabels, 'spec.podSelector.matchLabels', report);
  for (const type of listAt(spec.policyTypes))
    if (type !== 'Ingress' && type !== 'Egress')
      report('spec.policyTypes', `${JSON.stringify(type)} is not Ingress or Egress`);
  for (const [i, rule] of listAt(spec.egress).entries()) {
    for (const [k, peer] of listAt(objectAt(rule).to).entries()) {
      const cidr = objectAt(objectAt(peer).ipBlock).cidr;
      if (
        objectAt(peer).ipBlock !== undefined &&
        (typeof cidr !== 'string' || !(IPV4_CIDR.test(cidr) || IPV6_CIDR.test(cidr)))
      )
        report(`spec.egress[${i}].to[${k}].ipBlock.cidr`, `${JSON.stringify(cidr)} is not a CIDR`);
    }
    for (const [k, port] of listAt(objectAt(rule).ports).entries()) {
      const entry = objectAt(port);
      if (!['TCP', 'UDP', 'SCTP'].includes(String(entry.protocol ?? 'TCP')))
        report(`spec.egress[${i}].ports[${k}].protocol`, 'must be TCP, UDP or SCTP');
      if (typeof entry.port === 'number' && (!Number.isInteger(entry.port) || entry.port < 1 || entry.port > 65535))
        report(`spec.egress[${i}].ports[${k}].port`, 'must be 1-65535');
    }
  }
}

function rbacProblems(object: Json, report: Report): void {
  metadataProblems(object, DNS_SUBDOMAIN, report);
  if (object.kind === 'Role')
    for (const [i, rule] of listAt(object.rules).entries()) {
      const entry = objectAt(rule);
      if (listAt(entry.verbs).length === 0) report(`rules[${i}].verbs`, 'needs at least one verb');
      if (entry.apiGroups === undefined) report(`rules[${i}].apiGroups`, 'is required for a namespaced rule');
    }
  else {
    const ref = objectAt(object.roleRef);
    if (ref.apiGroup !== 'rbac.authorization.k8s.io' || (ref.kind !== 'Role' && ref.kind !== 'ClusterRole'))
      report('roleRef', 'must name a Role or ClusterRole of rbac.authorization.k8s.io');
    for (const [i, subject] of listAt(object.subjects).entries()) {
      const entry = objectAt(subject);
      if (entry.kind === 'ServiceAccount' && (entry.namespace === undefined || entry.apiGroup !== undefined))
        report(`subjects[${i}]`, 'a ServiceAccount needs a namespace and no apiGroup');
      if ((entry.kind === 'User' || entry.kind === 'Group') && entry.apiGroup !== 'rbac.authorization.k8s.io')
        report(`subjects[${i}].apiGroup`, 'must be rbac.authorization.k8s.io for a User or Group');
    }
  }
}

/** The kinds these rules know, with the apiVersion each is built with. */
export const RULED_KINDS: Readonly<Record<string, string>> = {
  Job: 'batch/v1',
  Secret: 'v1',
  NetworkPolicy: 'networking.k8s.io/v1',
  Role: 'rbac.authorization.k8s.io/v1',
  RoleBinding: 'rbac.authorization.k8s.io/v1',
};

/** Pure: what the API server would refuse in `object` beyond its schema, each as "path: problem". */
export function apiServerProblems(object: unknown): string[] {
  const problems: string[] = [];
  const report: Report = (at, problem) => problems.push(`${at}: ${problem}`);
  if (!isObject(object)) return ['(object): is not an object'];
  const kind = String(object.kind);
  if (!Object.hasOwn(RULED_KINDS, kind)) return [`kind: ${JSON.stringify(object.kind)} is not one agent-runner builds`];
  if (object.apiVersion !== RULED_KINDS[kind])
    report('apiVersion', `${JSON.stringify(object.apiVersion)} is not ${RULED_KINDS[kind]} for a ${kind}`);
  if (kind === 'Job') jobProblems(object, report);
  else if (kind === 'Secret') secretProblems(object, report);
  else if (kind === 'NetworkPolicy') networkPolicyProblems(object, report);
  else rbacProblems(object, report);
  return problems;
}
