package dev.claimq.security;

/** What a key may do. A key may carry several roles. */
public final class Role {
  private Role() {}

  /** Enqueue work and read items. */
  public static final String AGENT = "agent";

  /** Claim, heartbeat, complete and fail work, and read items. */
  public static final String WORKER = "worker";

  /** Read everything, list items and their history, retry, cancel, see queue stats. */
  public static final String OPERATOR = "operator";

  static final java.util.Set<String> ALL = dev.claimq.config.KeyEntry.ROLES;
}
