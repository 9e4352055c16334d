import { Column, Entity, PrimaryColumn } from 'typeorm';

/** Table `mirror_generation` (one row): bumped in every transaction that changes events or listings. */
@Entity({ name: 'mirror_generation' })
export class MirrorGenerationEntity {
  @PrimaryColumn({ type: 'boolean', default: true })
  id: boolean;

  @Column({ type: 'bigint' })
  generation: string;

  @Column({ name: 'changed_at', type: 'timestamptz' })
  changedAt: Date;
}
