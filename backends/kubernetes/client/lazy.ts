// A connector that loads @kubernetes/client-node only when a drain first calls the cluster: the client takes a few
// hundred milliseconds to import, and only repos with backend = "kubernetes" ever need it.
import type { KubeConnector, KubeJobs, KubeTarget } from '../port.js';

export function lazyKubeConnector(load: () => Promise<KubeConnector>): KubeConnector {
  let connector: Promise<KubeConnector> | undefined;
  return {
    connect(target: KubeTarget): KubeJobs {
      let jobs: Promise<KubeJobs> | undefined;
      const ready = () => (jobs ??= (connector ??= load()).then((real) => real.connect(target)));
      return {
        namespace: target.namespace,
        createSecret: async (...args) => (await ready()).createSecret(...args),
        createJob: async (...args) => (await ready()).createJob(...args),
        listJobs: async (...args) => (await ready()).listJobs(...args),
        watchJobs: async (...args) => (await ready()).watchJobs(...args),
        listPods: async (...args) => (await ready()).listPods(...args),
        listSecrets: async (...args) => (await ready()).listSecrets(...args),
        followLog: async (...args) => (await ready()).followLog(...args),
        deleteJob: async (...args) => (await ready()).deleteJob(...args),
        deleteSecret: async (...args) => (await ready()).deleteSecret(...args),
      };
    },
  };
}
