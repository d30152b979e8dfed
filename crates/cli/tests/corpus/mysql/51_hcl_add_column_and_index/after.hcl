table "countries" {
  column "code" {
    type = char(2)
  }
  column "name" {
    type = varchar(80)
  }
  column "rank" {
    type = int
    null = true
  }
  column "population" {
    type = bigint
    null = true
    default = 0
    comment = "people"
  }
  primary_key {
    columns = [column.code]
  }
  index "countries_name_idx" {
    columns = [column.name]
  }
  data {
    key = [column.code]
    rows = [{ code = "DE", name = "Germany", rank = 1 }, { code = "FR", name = "France", rank = 2 }]
  }
}
