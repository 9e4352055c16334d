import { Column, Entity, PrimaryColumn } from 'typeorm';

/** A single-flight lease (table `job_leases`): held while `expires_at` is in the future. */
@Entity({ name: 'job_leases' })
export class JobLeaseEntity {
  @PrimaryColumn({ type: 'text' })
  name: string;

  @Column({ type: 'text' })
  holder: string;

  /** Incremented on every acquisition; page writes check it in their transaction. */
  @Column({ name: 'fencing_token', type: 'bigint' })
  fencingToken: string;

  @Column({ name: 'acquired_at', type: 'timestamptz' })
  acquiredAt: Date;

  @Column({ name: 'renewed_at', type: 'timestamptz' })
  renewedAt: Date;

  @Column({ name: 'expires_at', type: 'timestamptz' })
  expiresAt: Date;

  @Column({ name: 'pass_id', type: 'bigint', nullable: true })
  passId: string | null;
}
