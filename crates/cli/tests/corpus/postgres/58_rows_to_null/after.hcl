schema "public" {}

table "countries" {
  schema = schema.public
  column "code" {
    type = char(2)
  }
  column "name" {
    type = varchar(80)
  }
  column "rank" {
    type = integer
    null = true
  }
  primary_key {
    columns = [column.code]
  }
  data {
    key = [column.code]
    rows = [{ code = "DE", name = "Germany", rank = null }, { code = "FR", name = "France", rank = 2 }]
  }
}
