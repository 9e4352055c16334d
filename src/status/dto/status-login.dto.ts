import { IsString, Length } from 'class-validator';

/** The status page's login: the admin key, once, in the body (never in a URL). */
export class StatusLoginDto {
  @IsString()
  @Length(1, 512)
  key!: string;
}
