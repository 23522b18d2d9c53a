/**
 * A reference to a key in an existing Secret: the one shape every setting that reads a value from
 * a Secret the user made takes (the exec gateway's webhook `urlSecret`, AnsibleForms' external
 * database `passwordSecret`). The Secret is in the namespace of the workload that reads it.
 */

/** A key in an existing Secret. */
export interface SecretKeyRef {
  /**
   * The Secret's name (in the namespace of the workload that reads it).
   * @pattern ^[a-z0-9]([-.a-z0-9]{0,251}[a-z0-9])?$
   */
  name: string;
  /**
   * The key in it.
   * @minLength 1
   */
  key: string;
}
