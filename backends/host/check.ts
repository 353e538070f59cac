// One line of doctor's report: what was checked, whether it holds, what was
// seen, and the fix when it does not.
export interface Check {
  readonly name: string;
  readonly ok: boolean;
  readonly detail: string;
  readonly fix: string;
  /** Holds, but with a caveat the operator should read (doctor prints "warn" and the fix; never a failure). */
  readonly warn?: boolean;
}
