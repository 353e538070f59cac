// A connector that loads the real client only when a command first calls
// GitHub: Octokit and its plugins take ~200 ms to import, and most commands
// never need them (the CLI's start-up stays a compiled-JS start).
import type { GitHubApi, GitHubConnection, GitHubConnector } from './api.js';

export function lazyConnector(load: () => Promise<GitHubConnector>): GitHubConnector {
  let connector: Promise<GitHubConnector> | undefined;
  return {
    connect(connection: GitHubConnection): GitHubApi {
      let api: Promise<GitHubApi> | undefined;
      const ready = () => (api ??= (connector ??= load()).then((real) => real.connect(connection)));
      return {
        getRepo: async (...args) => (await ready()).getRepo(...args),
        getBranch: async (...args) => (await ready()).getBranch(...args),
        findOpenPull: async (...args) => (await ready()).findOpenPull(...args),
        createPull: async (...args) => (await ready()).createPull(...args),
        updatePull: async (...args) => (await ready()).updatePull(...args),
        getPull: async (...args) => (await ready()).getPull(...args),
        checksOn: async (...args) => (await ready()).checksOn(...args),
        mergePull: async (...args) => (await ready()).mergePull(...args),
      };
    },
  };
}
