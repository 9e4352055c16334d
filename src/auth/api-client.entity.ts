import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';
import type { Scope } from './scopes';

/** A caller of this service (table `api_clients`, owned by the auth module). Never holds the key. */
@Entity({ name: 'api_clients' })
export class ApiClientEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ type: 'text' })
  name: string;

  /** Public lookup id (`trb_live_` + 10 characters); safe to show and log. */
  @Column({ name: 'key_prefix', type: 'text' })
  keyPrefix: string;

  /** HMAC-SHA256(pepper, key). */
  @Column({ name: 'key_hash', type: 'bytea', select: false })
  keyHash: Buffer;

  @Column({ type: 'text', array: true })
  scopes: Scope[];

  /** Subject binding (subject-binding.ts): both null when the key is unbound, both set when bound. */
  @Column({ name: 'user_subject_patterns', type: 'text', array: true, nullable: true })
  userSubjectPatterns: string[] | null;

  @Column({ name: 'integrator_subject_patterns', type: 'text', array: true, nullable: true })
  integratorSubjectPatterns: string[] | null;

  @Column({ name: 'created_by', type: 'uuid', nullable: true })
  createdBy: string | null;

  @Column({ name: 'created_at', type: 'timestamptz', insert: false })
  createdAt: Date;

  @Column({ name: 'revoked_at', type: 'timestamptz', nullable: true })
  revokedAt: Date | null;

  @Column({ name: 'last_used_at', type: 'timestamptz', nullable: true })
  lastUsedAt: Date | null;
}
