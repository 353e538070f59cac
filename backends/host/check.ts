// One line of doctor's report: what was checked, whether it holds, what was
// seen, and the fix when it does not.
export interface Check {
  readonly name: string;
  readonly ok: boolean;
  readonly detail: string;
  readonly fix: string;
}
